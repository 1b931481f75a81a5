#!/usr/bin/env bash
# Renders the language page set (service/ocr/testdata/langpages): receipts and invoices in
# Japanese, Korean and Traditional Chinese laid out across (a heading, lines of item and amount,
# an invoice's table), and Japanese and Traditional Chinese ones set in columns, read top to
# bottom and right to left. truth.tsv gives each page's language and its rows in reading order
# (separated by |; the cells of a row are one row). The PNGs are committed, so the tests need
# neither ImageMagick nor the fonts; run this again only to change the set.
#
# Needs ImageMagick's convert and Debian's fonts-noto-cjk (apt-get install, as root).
set -euo pipefail
out="${1:-service/ocr/testdata/langpages}"
convert=/usr/bin/convert
command -v "$convert" >/dev/null || convert=convert
identify=/usr/bin/identify
command -v "$identify" >/dev/null || identify=identify
mkdir -p "$out"
rm -f "$out"/*.png "$out"/truth.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The lines' size (scripts/render_langs.sh): a 9.6 pt face at 300 dpi, which the tests' degraded
# copy halves to 150 dpi.
size=40
spacing=20

# text FILE GRAVITY FACE LINE... renders the lines as one block.
text() {
  local file=$1 gravity=$2 face=$3
  shift 3
  "$convert" -background white -fill black -font "$face" -pointsize "$size" -interline-spacing "$spacing" \
    -gravity "$gravity" label:"$(printf '%s\n' "$@")" "$file"
}

# across NAME LANG FACE WIDTH SPEC... lays out a page of blocks, top to bottom. A spec is
# "c:line;line" (centred lines), "l:line;line" (lines from the left) or "t:a/b;c/d" (a table:
# rows of cells separated by slashes, the first column from the left and the others from the
# right, the table as wide as the page). Row texts for truth.tsv are the cells of each row joined.
across() {
  local name=$1 lang=$2 face=$3 width=$4
  shift 4
  local blocks=() rows=() k=0
  for spec in "$@"; do
    local kind=${spec%%:*} body=${spec#*:}
    IFS=';' read -r -a lines <<<"$body"
    case $kind in
    c | l)
      text "$tmp/b$k.png" "$([ "$kind" = c ] && echo center || echo west)" "$face" "${lines[@]}"
      rows+=("${lines[@]}")
      ;;
    t)
      local ncol cols=()
      IFS='/' read -r -a first <<<"${lines[0]}"
      ncol=${#first[@]}
      for ((j = 0; j < ncol; j++)); do
        local cells=()
        for row in "${lines[@]}"; do
          IFS='/' read -r -a cell <<<"$row"
          cells+=("${cell[$j]}")
        done
        text "$tmp/b${k}c$j.png" "$([ "$j" = 0 ] && echo west || echo east)" "$face" "${cells[@]}"
        [ "$j" -gt 0 ] && "$convert" "$tmp/b${k}c$j.png" -bordercolor white -border 30x0 "$tmp/b${k}c$j.png"
        cols+=("$tmp/b${k}c$j.png")
      done
      # The first column takes what the others leave of the page's width: amounts end at
      # its right edge, as on a receipt.
      local rest=0
      for c in "${cols[@]:1}"; do rest=$((rest + $("${identify}" -format %w "$c"))); done
      "$convert" "${cols[0]}" -background white -gravity west -extent "$((width - rest))x" "${cols[0]}"
      "$convert" "${cols[@]}" +append "$tmp/b$k.png"
      for row in "${lines[@]}"; do rows+=("${row//\//}"); done
      ;;
    esac
    # Each block set on the page's width, centred blocks centred, others from the left.
    "$convert" "$tmp/b$k.png" -background white -gravity "$([ "$kind" = c ] && echo center || echo west)" \
      -extent "${width}x" -bordercolor white -border 0x18 "$tmp/b$k.png"
    blocks+=("$tmp/b$k.png")
    k=$((k + 1))
  done
  "$convert" "${blocks[@]}" -append -bordercolor white -border 60 -type Grayscale -depth 8 "$out/$name.png"
  printf '%s\t%s\t%s\n' "$name.png" "$lang" "$(IFS='|'; echo "${rows[*]}")" >>"$out/truth.tsv"
}

# columns NAME LANG FACE LINE... sets each line as a column of upright characters, the first
# rightmost.
columns() {
  local name=$1 lang=$2 face=$3
  shift 3
  local cols=() i=0
  for line in "$@"; do
    "$convert" -background white -fill black -font "$face" -pointsize "$size" -interline-spacing -6 \
      label:"$(sed 's/./&\n/g; s/\n$//' <<<"$line")" -gravity north -extent 84x740 "$tmp/v$i.png"
    cols=("$tmp/v$i.png" "${cols[@]}")
    i=$((i + 1))
  done
  "$convert" "${cols[@]}" +append +repage -bordercolor white -border 60 -type Grayscale -depth 8 "$out/$name.png"
  printf '%s\t%s\t%s\n' "$name.png" "$lang" "$(IFS='|'; echo "$*")" >>"$out/truth.tsv"
}

across ja-receipt ja Noto-Sans-CJK-JP 860 \
  "c:さくら商店 丸の内店;東京都千代田区丸の内1-2-3;TEL 03-1234-5678" \
  "l:2024年8月15日(木) 14:32;レジ02 担当 佐藤" \
  "t:おにぎり 鮭/150円;緑茶ペットボトル/160円;カップラーメン/230円;チョコレート/198円;小計/738円;消費税 8%/59円;合計/797円;お預り/1,000円;お釣り/203円" \
  "c:ありがとうございました"
across ja-invoice ja Noto-Serif-CJK-JP 1380 \
  "c:請求書" \
  "l:山田商事株式会社 御中;請求番号 INV-2024-0815;発行日 2024年8月15日;下記の通りご請求申し上げます。" \
  "t:品名/数量/単価/金額;コピー用紙 A4/10/450/4,500;ボールペン 黒/20/120/2,400;ファイル/5/300/1,500;小計///8,400;消費税 10%///840;合計金額///9,240" \
  "l:お支払期限 2024年9月30日;振込先 みずほ銀行 本店 普通 1234567"
across ko-receipt ko Noto-Sans-CJK-KR 860 \
  "c:행복마트 강남점;서울특별시 강남구 테헤란로 123;전화 02-555-1234" \
  "l:2024년 8월 15일 14:32;계산원 김민수" \
  "t:생수 2L/1,200원;우유 1L/2,650원;라면 5개입/4,500원;사과 1봉/8,900원;합계/17,250원;받은 금액/20,000원;거스름돈/2,750원" \
  "c:감사합니다 또 오세요"
across ko-invoice ko Noto-Serif-CJK-KR 1380 \
  "c:거래명세서" \
  "l:공급받는자 한빛상사 귀하;문서번호 INV-2024-0815;발행일 2024년 8월 15일" \
  "t:품목/수량/단가/금액;복사용지 A4/10/4500/45000;볼펜/20/800/16000;파일철/5/1200/6000;공급가액///67000;부가세///6700;합계///73700" \
  "l:입금 계좌 국민은행 123-45-6789;담당자 이지은"
across zh-Hant-receipt zh-Hant Noto-Sans-CJK-TC 860 \
  "c:幸福便利商店 信義店;臺北市信義區松仁路100號;電話 02-2720-1234" \
  "l:2024年8月15日 14:32;收銀員 陳怡君" \
  "t:鮮奶 936毫升/95元;御飯糰 鮪魚/35元;綠茶 600毫升/25元;巧克力餅乾/59元;合計/214元;現金/500元;找零/286元" \
  "c:謝謝光臨 歡迎再來"
across zh-Hant-invoice zh-Hant Noto-Serif-CJK-TC 1380 \
  "c:報價單" \
  "l:客戶名稱 大同貿易股份有限公司;單號 QT-2024-0815;日期 2024年8月15日" \
  "t:品名/數量/單價/金額;影印紙 A4/10/450/4500;原子筆 藍色/20/15/300;資料夾/5/60/300;小計///5100;營業稅 5%///255;總計///5355" \
  "l:付款方式 銀行轉帳;聯絡人 林志明 0912-345-678"
columns ja-vertical ja Noto-Serif-CJK-JP \
  領収書 山田太郎様 金額壱萬五千円也 但し書籍代として 上記正に領収いたしました 令和六年八月十五日 株式会社さくら書房
columns zh-Hant-vertical zh-Hant Noto-Sans-CJK-TC \
  收據 茲收到王大明先生 新臺幣壹萬伍仟元整 此係購買書籍之款項 特立此據為憑 中華民國一一三年八月十五日 大同書局
