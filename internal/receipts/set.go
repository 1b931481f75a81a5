package receipts

import (
	"fmt"
	"strings"
)

// Set is the receipts of testdata/receipts, in id order. Their shops, people and numbers are made
// up; each is there for the cases the tests need (see Why, and testdata/receipts/README.md).
func Set() []Receipt {
	return []Receipt{a4Scan(), dense(), photo(), thermal()}
}

// Cell builders: text at an edge or centre of the printable width (a share of it), in a style.
func at(x float64, style int, text string) Cell { return Cell{Text: text, X: x, Style: style} }
func right(x float64, style int, text string) Cell {
	return Cell{Text: text, Align: Right, X: x, Style: style}
}
func centred(style int, text string) Row {
	return Row{Cells: []Cell{{Text: text, Align: Center, X: 0.5, Style: style}}}
}
func row(cells ...Cell) Row { return Row{Cells: cells} }
func gap(r Row, lines float64) Row {
	r.Space = lines
	return r
}

var rule = Row{Rule: true}

// money writes cents as a receipt does: 1,250.00.
func money(cents int) string {
	if cents < 0 {
		return "-" + money(-cents)
	}
	s := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	whole, frac, _ := strings.Cut(s, ".")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return whole + "." + frac
}

// roundTo5 rounds cents to the nearest 5, as cash totals are.
func roundTo5(cents int) int { return (cents + 2) / 5 * 5 }

// photo is the receipt most tests send: a café's bill photographed on a table, small (the size a
// phone's photo is sent at), at a slant, in uneven light and a little out of focus. Its date and
// total are the key fields the /ocr-json tests expect.
func photo() Receipt {
	const (
		body = iota
		head
		bold
	)
	items := []struct {
		name  string
		qty   int
		cents int
	}{
		{"Kopi O Ais", 2, 280}, {"Teh Tarik", 3, 250}, {"Roti Canai Telur", 2, 300},
		{"Nasi Lemak Ayam", 1, 1290}, {"Mee Goreng Mamak", 2, 850}, {"Milo Dinosaur", 1, 650},
		{"Char Kuey Teow", 1, 1100},
	}
	rows := []Row{
		centred(head, "KEDAI KOPI SERI MURNI"),
		centred(body, "SERI MURNI TRADING (JM0731154-X)"),
		centred(body, "NO. 18, JALAN MERBAU 2,"),
		centred(body, "TAMAN DAHLIA, 81200 JOHOR BAHRU"),
		centred(body, "TEL: 07-235 8441"),
		centred(body, "GST ID: 001234509876"),
		gap(centred(bold, "SIMPLIFIED TAX INVOICE"), 0.4),
		gap(row(at(0, body, "Invoice No: CS00214471")), 0.4),
		row(at(0, body, "Date: 25/12/2018"), right(1, body, "Time: 12:31")),
		row(at(0, body, "Cashier: Nurul"), right(1, body, "Table: 7")),
		rule,
		row(at(0, bold, "Item"), right(0.68, bold, "Qty"), right(1, bold, "Amount")),
		rule,
	}
	sub, qty := 0, 0
	for _, it := range items {
		amount := it.qty * it.cents
		sub += amount
		qty += it.qty
		rows = append(rows, row(at(0, body, it.name), right(0.68, body, fmt.Sprint(it.qty)), right(1, body, money(amount))))
	}
	service := (sub*10 + 50) / 100
	gst := ((sub+service)*6 + 50) / 100
	total := roundTo5(sub + service + gst)
	rows = append(rows,
		rule,
		row(at(0, body, fmt.Sprintf("Total Qty: %d", qty))),
		row(at(0, body, "Sub Total"), right(1, body, money(sub))),
		row(at(0, body, "Service Charge 10%"), right(1, body, money(service))),
		row(at(0, body, "GST 6%"), right(1, body, money(gst))),
		row(at(0, body, "Rounding Adj"), right(1, body, money(total-sub-service-gst))),
		gap(row(at(0, bold, "TOTAL INCLUSIVE GST"), right(1, bold, money(total))), 0.3),
		row(at(0, body, "Cash"), right(1, body, money(10000))),
		row(at(0, body, "Change"), right(1, body, money(10000-total))),
		gap(row(at(0, bold, "GST Summary"), right(0.68, bold, "Amount"), right(1, bold, "Tax")), 0.5),
		row(at(0, body, "SR @ 6%"), right(0.68, body, money(sub+service)), right(1, body, money(gst))),
		gap(centred(body, "Thank You & Please Come Again"), 0.6),
		centred(body, "Goods sold are not returnable"),
	)
	return Receipt{
		ID:  "photo",
		Why: "the receipt most tests send: a phone photo (perspective, a curl, uneven light, soft focus); its date and total are what the /ocr-json tests expect",
		Key: Key{Company: "KEDAI KOPI SERI MURNI", Date: "25/12/2018",
			Address: "NO. 18, JALAN MERBAU 2, TAMAN DAHLIA, 81200 JOHOR BAHRU", Total: money(total)},
		Page: Page{Width: 460, Margin: 22, Leading: 1.38, Rows: rows, Styles: []Style{
			body: {Font: DejaVuSans, Size: 15}, head: {Font: DejaVuSansBold, Size: 20}, bold: {Font: DejaVuSansBold, Size: 15}}},
		Shot: Capture{Seed: 3, Width: 470, Height: 940, Center: [2]float64{0.51, 0.5}, Angle: -1.6, Keystone: 0.07, Bow: 5,
			Paper: [3]float64{246, 243, 236}, Ink: [3]float64{38, 36, 42}, Background: [3]float64{96, 72, 52}, Texture: 9,
			EdgeShadow: 0.45, EdgeWidth: 5, Blur: 0.7, Noise: 3,
			Light: Light{Level: 0.98, Gradient: [2]float64{0.16, 0.1}, Vignette: 0.12,
				Shadow: struct{ Angle, Offset, Softness, Depth float64 }{Angle: 2.3, Offset: 0.42, Softness: 0.08, Depth: 0.22}}},
		Quality: 85,
	}
}

// dense is the densest page, a long supermarket receipt of 26 items photographed whole: about a
// hundred segments, the slowest receipt to read, and the slow request of the admission tests.
func dense() Receipt {
	const (
		body = iota
		head
		bold
	)
	items := []struct {
		name  string
		qty   int
		cents int
		code  string
	}{
		{"GARDENIA CLASSIC 400G", 1, 360, "Z"}, {"DUTCH LADY UHT 1L", 2, 725, "Z"},
		{"NESCAFE 3IN1 ORIGINAL 30S", 1, 1699, "S"}, {"MAGGI KARI 5X79G", 2, 629, "S"},
		{"BERAS SUPER SPECIAL 5KG", 1, 2190, "Z"}, {"MINYAK MASAK SAJI 2KG", 1, 1290, "Z"},
		{"TELUR AYAM GRED A 30S", 1, 1350, "Z"}, {"GULA PASIR HALUS 1KG", 2, 285, "Z"},
		{"SUNLIGHT LEMON 900ML", 1, 599, "S"}, {"DYNAMO POWER GEL 3KG", 1, 3290, "S"},
		{"COLGATE TOTAL 150G", 2, 1150, "S"}, {"DETTOL SHOWER GEL 1L", 1, 1890, "S"},
		{"AYAM SEGAR BAHAGIAN", 1, 1567, "Z"}, {"IKAN KEMBUNG 500G", 1, 890, "Z"},
		{"BAWANG MERAH INDIA", 1, 412, "Z"}, {"KENTANG HOLLAND 1KG", 1, 469, "Z"},
		{"TOMATO CAMERON 500G", 1, 325, "Z"}, {"PISANG BERANGAN", 1, 538, "Z"},
		{"SOS CILI LIFE 340G", 2, 355, "S"}, {"KICAP MANIS ADABI", 1, 465, "S"},
		{"HUP SENG CREAM CRACKER", 1, 699, "S"}, {"MILO ACTIV-GO 1KG", 1, 2599, "S"},
		{"TISU KOTAK PREMIER 5S", 1, 1180, "S"}, {"AIR MINERAL SPRITZER 6S", 2, 890, "Z"},
		{"YOGURT NESTLE ASLI", 3, 245, "S"}, {"BEG PLASTIK", 2, 20, "S"},
	}
	rows := []Row{
		centred(head, "PASARAYA MAJU JAYA SDN BHD"),
		centred(body, "(Co. Reg. 512834-K)"),
		centred(body, "LOT 22, JALAN INDUSTRI 3/5,"),
		centred(body, "43300 SERI KEMBANGAN, SELANGOR"),
		row(at(0.04, body, "Tel: 03-8941 2270"), right(0.96, body, "Fax: 03-8941 2271")),
		centred(body, "GST Reg No: 000912345678"),
		gap(centred(bold, "TAX INVOICE"), 0.3),
		row(at(0, body, "Receipt: 0108-2231-4471"), right(1, body, "Counter: 08")),
		row(at(0, body, "Date: 14/03/2019 18:42"), right(1, body, "Cashier: AINA")),
		rule,
	}
	total, qty, taxable := 0, 0, 0
	for _, it := range items {
		amount := it.qty * it.cents
		total += amount
		qty += it.qty
		if it.code == "S" {
			taxable += amount
		}
		rows = append(rows, row(at(0, body, it.name),
			right(0.79, body, fmt.Sprintf("%d x %s", it.qty, money(it.cents))),
			right(1, body, money(amount)+" "+it.code)))
	}
	gst := (taxable*6 + 53) / 106 // prices include GST
	cash := 31000
	rows = append(rows,
		rule,
		row(at(0, body, fmt.Sprintf("Items: %d", len(items))), right(1, body, fmt.Sprintf("Qty: %d", qty))),
		row(at(0, bold, "TOTAL"), right(1, bold, money(total))),
		row(at(0, body, "CASH"), right(1, body, money(cash))),
		row(at(0, body, "CHANGE"), right(1, body, money(cash-total))),
		gap(row(at(0, bold, "GST Summary"), right(0.68, bold, "Amount"), right(1, bold, "Tax")), 0.4),
		row(at(0, body, "S @ 6%"), right(0.68, body, money(taxable)), right(1, body, money(gst))),
		row(at(0, body, "Z @ 0%"), right(0.68, body, money(total-taxable)), right(1, body, "0.00")),
		gap(row(at(0, body, "Member: 8801 2233 4455"), right(1, body, "Points: 312")), 0.4),
		gap(centred(body, "THANK YOU, PLEASE COME AGAIN"), 0.4),
		centred(body, "Exchange within 7 days with receipt"),
	)
	return Receipt{
		ID:  "dense",
		Why: "the densest page: a long supermarket receipt, photographed whole; the slowest to read, the slow request of the admission tests",
		Key: Key{Company: "PASARAYA MAJU JAYA SDN BHD", Date: "14/03/2019",
			Address: "LOT 22, JALAN INDUSTRI 3/5, 43300 SERI KEMBANGAN, SELANGOR", Total: money(total)},
		Page: Page{Width: 620, Margin: 26, Leading: 1.3, Rows: rows, Styles: []Style{
			body: {Font: GoRegular, Size: 20}, head: {Font: GoBold, Size: 25}, bold: {Font: GoBold, Size: 20}}},
		Shot: Capture{Seed: 34, Width: 1080, Height: 1527, Center: [2]float64{0.5, 0.505}, Angle: 0.9, Keystone: 0.03, Bow: 3,
			Paper: [3]float64{243, 242, 238}, Ink: [3]float64{30, 30, 34}, Background: [3]float64{150, 156, 160}, Texture: 6,
			EdgeShadow: 0.3, EdgeWidth: 8, Blur: 0.6, Noise: 2.5, Scale: 1.02,
			Light: Light{Gradient: [2]float64{-0.1, 0.08}, Vignette: 0.08}},
		Quality: 85,
	}
}

// thermal is a narrow thermal printout, worn: the type printed in dots, some missing, faint
// columns where the print head is worn, fading down the paper; scanned flat. Its truth files end
// their lines with CRLF and hold commas inside a segment's text.
func thermal() Receipt {
	const (
		body = iota
		tall
		bold
	)
	items := []struct {
		name  string
		qty   int
		cents int
	}{
		{"PANADOL ACTIFAST 20S", 1, 1290}, {"VITAMIN C 1000MG 30S", 2, 3850},
		{"BLOOD PRESSURE MONITOR", 1, 125000}, {"FACE MASK 3PLY 50S", 1, 1590},
		{"ANTISEPTIC CREAM 30G", 1, 845},
	}
	rows := []Row{
		centred(tall, "FARMASI SENTOSA"),
		gap(centred(body, "SENTOSA HEALTHCARE SDN BHD"), 0.3),
		centred(body, "(Co. No. 774301-T)"),
		centred(body, "LOT 5, JALAN 3/4, TAMAN SERI,"),
		centred(body, "68000 AMPANG, SELANGOR"),
		centred(body, "TEL: 03-4270 1188"),
		rule,
		row(at(0, body, "INV: A0123-5580"), right(1, body, "17/06/19")),
		row(at(0, body, "CASHIER: MEI LING"), right(1, body, "09:14:52")),
		rule,
	}
	total := 0
	for _, it := range items {
		amount := it.qty * it.cents
		total += amount
		rows = append(rows,
			row(at(0, body, it.name)),
			row(at(0.08, body, fmt.Sprintf("%d x %s", it.qty, money(it.cents))), right(1, body, money(amount))))
	}
	rows = append(rows,
		rule,
		row(at(0, body, "SUBTOTAL"), right(1, body, money(total))),
		row(at(0, bold, "TOTAL"), right(1, bold, money(total))),
		row(at(0, body, "VISA"), right(1, body, money(total))),
		row(at(0, body, "CARD: 4563 **** 7712")),
		gap(centred(body, "PRICES INCLUDE SST, IF ANY."), 0.5),
		centred(body, "THANK YOU, GET WELL SOON"),
	)
	return Receipt{
		ID:  "thermal",
		Why: "a worn thermal printout, scanned: dotted type, missing dots, faint columns, fading; its box and key files end their lines with CRLF and hold commas inside a segment",
		Key: Key{Company: "SENTOSA HEALTHCARE SDN BHD", Date: "17/06/19",
			Address: "LOT 5, JALAN 3/4, TAMAN SERI, 68000 AMPANG, SELANGOR", Total: money(total)},
		Page: Page{Width: 416, Margin: 16, Leading: 1.35, Rows: rows, Styles: []Style{
			body: {Font: DejaVuMono, Size: 19}, tall: {Font: DejaVuMonoBold, Size: 22, Tall: true}, bold: {Font: DejaVuMonoBold, Size: 19}}},
		Wear: Wear{Seed: 583, Dots: true, Dropout: 0.09, WeakColumns: 6, WeakStrength: 0.4, Fade: 0.35, FadePeriod: 420},
		Shot: Capture{Seed: 583, Width: 540, Height: 1200, Center: [2]float64{0.5, 0.5}, Angle: 0.7, Scale: 1.2,
			Paper: [3]float64{238, 236, 230}, Ink: [3]float64{58, 56, 70}, Background: [3]float64{252, 252, 252},
			EdgeShadow: 0.12, EdgeWidth: 3, Blur: 0.7, Noise: 2.5},
		Quality: 85,
		CRLF:    true,
	}
}

// a4Scan is a restaurant's bill laid on a flatbed scanner and scanned as a whole A4 page at
// 600 dpi (4961×7016, 35 megapixels): the receipt fills a small part of the page. Its lines are
// tall in the file's pixels (about 100 px, as 600-dpi scans of receipts are), so the service
// decodes it at half size (OCRGATE_JPEG_HALF_PIXELS) without decoding it again whole, its first
// detection pass reads the JPEG's preview (a page of 6 000 px or more), and its small text sends
// detection into a second pass over the part of the page that holds it.
func a4Scan() Receipt {
	const (
		body = iota
		head
		bold
	)
	items := []struct {
		name  string
		qty   int
		cents int
	}{
		{"Nasi Goreng Kampung", 2, 1450}, {"Tom Yam Seafood (M)", 1, 3200},
		{"Kangkung Belacan", 1, 1200}, {"Ikan Siakap Stim Limau", 1, 5800},
		{"Telur Dadar", 2, 600}, {"Sirap Limau", 3, 450}, {"Nasi Putih", 4, 200},
	}
	rows := []Row{
		centred(head, "Restoran Anjung Selera"),
		centred(body, "ANJUNG SELERA F&B (002287614-M)"),
		centred(body, "12 JALAN TUN RAZAK,"),
		centred(body, "50400 KUALA LUMPUR"),
		centred(body, "Tel 03-2166 0190"),
		rule,
		row(at(0, body, "Bill: 20871"), right(1, body, "Table: B4")),
		row(at(0, body, "Date: 02/09/2019"), right(1, body, "20:05")),
		row(at(0, body, "Pax: 4"), right(1, body, "Server: Hafiz")),
		rule,
	}
	sub := 0
	for _, it := range items {
		amount := it.qty * it.cents
		sub += amount
		rows = append(rows, row(at(0, body, fmt.Sprintf("%d %s", it.qty, it.name)), right(1, body, money(amount))))
	}
	service := (sub*10 + 50) / 100
	sst := ((sub+service)*6 + 50) / 100
	total := roundTo5(sub + service + sst)
	rows = append(rows,
		rule,
		row(at(0, body, "Subtotal"), right(1, body, money(sub))),
		row(at(0, body, "Service 10%"), right(1, body, money(service))),
		row(at(0, body, "SST 6%"), right(1, body, money(sst))),
		row(at(0, body, "Rounding"), right(1, body, money(total-sub-service-sst))),
		gap(row(at(0, bold, "TOTAL"), right(1, bold, money(total))), 0.3),
		row(at(0, body, "Mastercard"), right(1, body, money(total))),
		gap(centred(body, "Terima kasih. Jumpa lagi!"), 0.6),
	)
	const dpi = 600.0 / 203 // the scan's pixels per printer dot
	return Receipt{
		ID:  "a4scan",
		Why: "a 600-dpi A4 scan (4961×7016) with a small receipt on it: the JPEG's preview for the first detection pass, half-size decoding, tiled detection, a 35-megapixel page's cost",
		Key: Key{Company: "ANJUNG SELERA F&B", Date: "02/09/2019",
			Address: "12 JALAN TUN RAZAK, 50400 KUALA LUMPUR", Total: money(total)},
		Page: Page{Width: 640, Margin: 32, Leading: 1.4, Rows: rows, Styles: []Style{
			body: {Font: GoMono, Size: 27}, head: {Font: DejaVuSerifB, Size: 34}, bold: {Font: GoMonoBold, Size: 27}}},
		Wear: Wear{Seed: 282, Dots: true, Dropout: 0.015},
		Shot: Capture{Seed: 282, Width: 4961, Height: 7016, Center: [2]float64{0.33, 0.3}, Angle: -0.5, Scale: dpi,
			Paper: [3]float64{246, 245, 240}, Ink: [3]float64{34, 34, 40}, Background: [3]float64{252, 252, 251},
			EdgeShadow: 0.2, EdgeWidth: 6, Noise: 1},
		Quality: 80,
	}
}
