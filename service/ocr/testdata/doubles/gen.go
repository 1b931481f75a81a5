//go:build ignore

// gen writes text.txt, the text of the double-letter set (scripts/render_doubles.sh draws it):
// 300 lines of English words, about half of them with a doubled letter, a comma before a space in
// two lines of three and a comma with no space after it ("red,green") in one line of five. The
// word lists are the project's own; the lines are drawn from them with a fixed seed.
//
//	go run gen.go   (in this directory)
package main

import (
	"log"
	"math/rand/v2"
	"os"
	"strings"
)

// doubled are English words with a doubled letter.
const doubled = `
all will well tree free see seen been need feel keep week three street green sleep meet sheet
deep speed agree committee coffee little letter better matter butter bottle battle settle
pretty attention attack attempt attach attend bottom cotton button happy apply supply support
suppose opposite opportunity approach appear apple shipping stopping dinner winner manner
banner planning running beginning summer common comment commerce commission community recommend
accommodation accept access account accurate success occur occasion according address process
possible pass class glass grass mass less mess business necessary assist assume assess discuss
issue tissue mission passion session impression express professor afford effect effort offer
office official difference different staff stuff cliff sheriff traffic sufficient suggest
bigger egg luggage aggressive trigger struggle ball call fall hall small tall wall full pull
bull skill still fill hill kill mill till spell sell tell yell dollar collect college follow
hollow yellow fellow allow ally really finally usually totally actually excellent intelligent
parallel balloon illustration collection miss kiss boss loss cross dress press stress guess
attitude getting setting sitting written kitten cattle happen pepper copper upper puppy
shopping slipper supper annual announce anniversary connect channel funny tennis tunnel cannot
penny innocent scanner hammer summary immediate immense grammar comma arrive arrange array
carry marry sorry worry hurry error mirror terrible current correct territory barrel borrow
tomorrow narrow arrow merry cherry berry ferry strawberry add odd ladder middle riddle sudden
hidden wedding paddle saddle puddle rabbit ribbon hobby lobby bubble rubber cabbage stubborn
buzz pizza puzzle dizzy jazz giraffe waffle book look cook good food mood school room moon soon
cool pool tool wood door floor blood flood foot root boot shoot choose goose loose tooth smooth
booklet bookkeeper noon too took wool poor proof roof seed feed weed steep seek cheek wheel
steel peel sweet queen screen between degree employee guarantee referee freedom speech beer
deer cheer career engineer pioneer volunteer indeed succeed proceed exceed fee knee teeth
vacuum committed submitted permitted fitted kettle shuttle cottage lottery rotten bell bill
cell doll dull fell gull mall null pill poll roll shall shell smell spill stall toll alley
bullet bully collar gallery hello illegal jelly killer million pillow silly swollen tallest
valley village willow installation cancellation traveller fully carefully tissue assessment
allowance millimetre toddler trekking`

// plain are common English words without one.
const plain = `
the of and to in is that for it as was with on at by from his her they this we you are or an be
not have had one which their there what about more when your can said do each them she many
some so these would other into time has two like him make than first could people only its over
new most after work years way our where much before right must through back house world place
part water show under name form order line page number paper data report result year state case
group fact point home river price value table chart figure section chapter notes final method`

func main() {
	rnd := rand.New(rand.NewPCG(34, 7))
	d, p := strings.Fields(doubled), strings.Fields(plain)
	var b strings.Builder
	for range 300 {
		n := 7 + rnd.IntN(5)
		ws := make([]string, n)
		for j := range ws {
			if rnd.IntN(2) == 0 {
				ws[j] = d[rnd.IntN(len(d))]
			} else {
				ws[j] = p[rnd.IntN(len(p))]
			}
		}
		if rnd.IntN(3) < 2 {
			ws[rnd.IntN(n-2)] += ","
		}
		ws[0] = strings.ToUpper(ws[0][:1]) + ws[0][1:]
		if rnd.IntN(5) == 0 {
			if k := rnd.IntN(n - 1); !strings.HasSuffix(ws[k], ",") {
				ws = append(ws[:k], append([]string{ws[k] + "," + ws[k+1]}, ws[k+2:]...)...)
			}
		}
		line := strings.Join(ws, " ")
		if rnd.IntN(2) == 0 {
			line += "."
		}
		b.WriteString(line + "\n")
	}
	if err := os.WriteFile("text.txt", []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}
