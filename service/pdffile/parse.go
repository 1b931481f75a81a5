package pdffile

import (
	"bytes"
	"strconv"
)

// maxDepth bounds how deeply arrays and dictionaries nest in one object: a file is refused
// beyond it rather than parsed by unbounded recursion.
const maxDepth = 64

// maxObjectItems bounds the entries of one array or dictionary.
const maxObjectItems = 1 << 20

// parser reads objects from data starting at pos.
type parser struct {
	data []byte
	pos  int
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case isSpace(c):
			p.pos++
		case c == '%':
			for p.pos < len(p.data) && p.data[p.pos] != '\n' && p.data[p.pos] != '\r' {
				p.pos++
			}
		default:
			return
		}
	}
}

// keyword reads a run of regular characters (a keyword or a number).
func (p *parser) keyword() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.data) && !isSpace(p.data[p.pos]) && !isDelim(p.data[p.pos]) {
		p.pos++
	}
	return string(p.data[start:p.pos])
}

// object reads one direct object, or a reference "n g R".
func (p *parser) object(depth int) (Object, error) {
	if depth > maxDepth {
		return nil, unreadable("objects nest deeper than %d", maxDepth)
	}
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, unreadable("an object runs past the end of the file")
	}
	switch c := p.data[p.pos]; c {
	case '/':
		return p.name(), nil
	case '(':
		return p.literal()
	case '<':
		if p.pos+1 < len(p.data) && p.data[p.pos+1] == '<' {
			return p.dict(depth)
		}
		return p.hex()
	case '[':
		p.pos++
		var a Array
		for {
			p.skipSpace()
			if p.pos >= len(p.data) {
				return nil, unreadable("an array runs past the end of the file")
			}
			if p.data[p.pos] == ']' {
				p.pos++
				return a, nil
			}
			if len(a) >= maxObjectItems {
				return nil, unreadable("an array of more than %d entries", maxObjectItems)
			}
			o, err := p.object(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, o)
		}
	}
	kw := p.keyword()
	switch kw {
	case "":
		return nil, unreadable("an unexpected %q at %d", p.data[p.pos], p.pos)
	case "null":
		return nil, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	if n, err := strconv.ParseInt(kw, 10, 64); err == nil {
		// "n g R" is a reference; look ahead without consuming anything else.
		save := p.pos
		g := p.keyword()
		if gen, err := strconv.ParseInt(g, 10, 32); err == nil && gen >= 0 && n >= 0 && n < 1<<31 {
			if p.keyword() == "R" {
				return Ref{Num: int(n), Gen: int(gen)}, nil
			}
		}
		p.pos = save
		return n, nil
	}
	if f, err := strconv.ParseFloat(kw, 64); err == nil {
		return f, nil
	}
	return nil, unreadable("an unknown keyword at %d", p.pos)
}

func (p *parser) name() Name {
	p.pos++ // '/'
	var b []byte
	for p.pos < len(p.data) && !isSpace(p.data[p.pos]) && !isDelim(p.data[p.pos]) {
		c := p.data[p.pos]
		if c == '#' && p.pos+2 < len(p.data) {
			if v, err := strconv.ParseUint(string(p.data[p.pos+1:p.pos+3]), 16, 8); err == nil {
				b = append(b, byte(v))
				p.pos += 3
				continue
			}
		}
		b = append(b, c)
		p.pos++
	}
	return Name(b)
}

func (p *parser) literal() (Object, error) {
	p.pos++ // '('
	var b []byte
	nest := 0
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		p.pos++
		switch c {
		case '(':
			nest++
		case ')':
			if nest == 0 {
				return String(b), nil
			}
			nest--
		case '\\':
			if p.pos >= len(p.data) {
				return nil, unreadable("a string runs past the end of the file")
			}
			e := p.data[p.pos]
			p.pos++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if p.pos < len(p.data) && p.data[p.pos] == '\n' {
					p.pos++
				}
				continue
			case '\n':
				continue
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '7'; k++ {
						v = v*8 + int(p.data[p.pos]-'0')
						p.pos++
					}
					c = byte(v)
				} else {
					c = e
				}
			}
		}
		b = append(b, c)
	}
	return nil, unreadable("a string runs past the end of the file")
}

func (p *parser) hex() (Object, error) {
	p.pos++ // '<'
	var b []byte
	half, odd := byte(0), false
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		p.pos++
		var v byte
		switch {
		case c == '>':
			if odd {
				b = append(b, half<<4)
			}
			return String(b), nil
		case isSpace(c):
			continue
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return nil, unreadable("a bad hexadecimal string")
		}
		if odd {
			b = append(b, half<<4|v)
		} else {
			half = v
		}
		odd = !odd
	}
	return nil, unreadable("a string runs past the end of the file")
}

func (p *parser) dict(depth int) (Object, error) {
	p.pos += 2 // "<<"
	d := Dict{}
	for {
		p.skipSpace()
		if p.pos+1 < len(p.data) && p.data[p.pos] == '>' && p.data[p.pos+1] == '>' {
			p.pos += 2
			return d, nil
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '/' {
			return nil, unreadable("a dictionary key that is not a name at %d", p.pos)
		}
		if len(d) >= maxObjectItems {
			return nil, unreadable("a dictionary of more than %d entries", maxObjectItems)
		}
		k := p.name()
		v, err := p.object(depth + 1)
		if err != nil {
			return nil, err
		}
		d[k] = v
	}
}

// streamStart reads the "stream" keyword after a stream's dictionary, if there is one, and
// returns where its data starts (-1 when the object is not a stream).
func (p *parser) streamStart() int {
	save := p.pos
	p.skipSpace()
	if !bytes.HasPrefix(p.data[p.pos:], []byte("stream")) {
		p.pos = save
		return -1
	}
	p.pos += len("stream")
	// The keyword is followed by CRLF or LF (a lone CR is tolerated).
	if p.pos < len(p.data) && p.data[p.pos] == '\r' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
	}
	return p.pos
}
