#!/bin/sh
# Writes dejavu-subset.ttf: DejaVu Sans (Debian's fonts-dejavu-core) cut down to the characters the
# text-layer tests draw: ASCII, Latin-1, Polish letters, the dotless i and spacing accents, and
# Arabic letters with their presentation forms. DejaVu's licence (Bitstream Vera, with the
# DejaVu changes in the public domain) allows it to be redistributed and cut down.
#
#   apt-get install fonts-dejavu-core python3-fonttools && sh internal/testdoc/testdata/make-font.sh
set -eu
cd "$(dirname "$0")"
/usr/bin/python3 -m fontTools.subset /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf \
  --unicodes='U+0020-007E,U+00A0-00FF,U+0104-0107,U+0118-0119,U+0131,U+0141-0144,U+015A-015B,U+0179-017C,U+02C6-02DD,U+0300-0308,U+060C,U+061F,U+0621-064A,U+0660-0669,U+FE70-FEFC' \
  --no-hinting --drop-tables+=GSUB,GPOS,GDEF,kern --layout-features='' --name-IDs='*' --name-languages='*' \
  --glyph-names --output-file=dejavu-subset.ttf
