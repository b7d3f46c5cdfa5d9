package jsonutf8

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth is how deep a member path is followed; encoding/json refuses
// deeper nesting anyway.
const maxDepth = 10000

// Problem is one place in a line that is not Unicode text.
type Problem struct {
	// Path names the member: "object.value", "identifiers[0]", `a["b c"]`;
	// "" for the line's top level.
	Path string
	// Name is set when the problem is in the name of a member of Path, not
	// in a value.
	Name bool
	// Offset is where the bad byte or escape starts in the line, from 0.
	Offset int
	// InString is where it starts in its string's contents (between the
	// quotes, as written), from 1; 0 when it is outside a string.
	InString int
	// Escape is the unpaired surrogate escape as written (`\ud800`); "" for
	// a byte that is not UTF-8.
	Escape string
}

// String says where the problem is and what it is, for a person:
// "object.value: invalid UTF-8 at byte 3 of the string (byte 42 of the line)".
func (p Problem) String() string {
	var b strings.Builder
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	if p.Name {
		b.WriteString("member name: ")
	}
	if p.Escape != "" {
		fmt.Fprintf(&b, "escape %s is half of a UTF-16 surrogate pair without the other half", p.Escape)
	} else {
		b.WriteString("invalid UTF-8")
	}
	switch {
	case p.InString > 0:
		fmt.Fprintf(&b, " at byte %d of the string (byte %d of the line)", p.InString, p.Offset+1)
	default:
		fmt.Fprintf(&b, " outside a string at byte %d of the line", p.Offset+1)
	}
	return b.String()
}

// Valid reports whether line is Unicode text as JSON sees it: valid UTF-8,
// with every surrogate escape part of a pair. It is the fast test; when it
// is false, Check says where and Fix mends.
func Valid(line []byte) bool {
	if !utf8.Valid(line) {
		return false
	}
	if !maySurrogate(line) {
		return true
	}
	ok := true
	walk(line, func(*state, bool, int, int, string) { ok = false })
	return ok
}

// maySurrogate reports whether line has a \u escape of a surrogate
// (\uD800 to \uDFFF), paired or not: only such lines need the walk.
func maySurrogate(line []byte) bool {
	for {
		i := bytes.IndexByte(line, '\\')
		if i < 0 || i+3 >= len(line) {
			return false
		}
		if line[i+1] == 'u' && (line[i+2] == 'd' || line[i+2] == 'D') && strings.IndexByte("89abcdefABCDEF", line[i+3]) >= 0 {
			return true
		}
		line = line[i+2:] // past the escaped byte, so that \\u is not an escape
	}
}

// Check walks line and returns its first max problems (all when max <= 0)
// and how many it has in all.
func Check(line []byte, max int) (first []Problem, total int) {
	walk(line, func(st *state, name bool, start, off int, esc string) {
		total++
		if max > 0 && len(first) >= max {
			return
		}
		p := Problem{Path: st.path(name), Name: name, Offset: off, Escape: esc}
		if start >= 0 {
			p.InString = off - start + 1
		}
		first = append(first, p)
	})
	return first, total
}

// Fix returns a copy of line with each byte that is not UTF-8 replaced by
// U+FFFD and each unpaired surrogate escape by \ufffd; line itself when it
// has neither.
func Fix(line []byte) []byte {
	var out []byte
	done := 0
	walk(line, func(_ *state, _ bool, _, off int, esc string) {
		if out == nil {
			out = make([]byte, 0, len(line)+16)
		}
		out = append(out, line[done:off]...)
		if esc != "" {
			out = append(out, `\ufffd`...)
			done = off + len(esc)
		} else {
			out = append(out, "\uFFFD"...)
			done = off + 1
		}
	})
	if out == nil {
		return line
	}
	return append(out, line[done:]...)
}

// frame is one open object or array of the walk.
type frame struct {
	array   bool
	index   int    // the current item of an array
	name    []byte // the current member's name token of an object, quotes included
	wantKey bool   // an object's next string is a member name
}

// state is the walk's stack of open objects and arrays.
type state struct {
	stack  []frame
	deeper int // levels open beyond maxDepth
}

// path names the member being read; with name, the object whose member name
// is being read.
func (st *state) path(name bool) string {
	frames := st.stack
	if name && len(frames) > 0 && st.deeper == 0 {
		frames = frames[:len(frames)-1]
	}
	var b strings.Builder
	for i, f := range frames {
		if f.array {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.index))
			b.WriteByte(']')
			continue
		}
		if f.name == nil {
			continue
		}
		writeName(&b, f.name, i == 0)
	}
	if st.deeper > 0 {
		b.WriteString("…")
	}
	return b.String()
}

// writeName appends a member name token (quotes included) to a path: .name
// when it is a plain word, else ["name"] as JSON writes it (bad bytes then
// show as U+FFFD).
func writeName(b *strings.Builder, token []byte, first bool) {
	var s string
	if json.Unmarshal(token, &s) != nil {
		s = string(bytes.ToValidUTF8(bytes.Trim(token, `"`), []byte("\uFFFD")))
	}
	if plainName(s) {
		if !first {
			b.WriteByte('.')
		}
		b.WriteString(s)
		return
	}
	q, _ := json.Marshal(s)
	b.WriteByte('[')
	b.Write(q)
	b.WriteByte(']')
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// report is called for each problem, in line order: name tells a member
// name from a value, start is where its string's contents begin (-1 outside
// a string), off where the problem starts, esc the surrogate escape ("" for
// a bad byte, which is always one byte long).
type report func(st *state, name bool, start, off int, esc string)

// walk calls bad for every problem of line.
func walk(line []byte, bad report) {
	st := &state{}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == '{' || c == '[':
			if len(st.stack) < maxDepth && st.deeper == 0 {
				st.stack = append(st.stack, frame{array: c == '[', wantKey: c == '{'})
			} else {
				st.deeper++
			}
			i++
		case c == '}' || c == ']':
			if st.deeper > 0 {
				st.deeper--
			} else if len(st.stack) > 0 {
				st.stack = st.stack[:len(st.stack)-1]
			}
			i++
		case c == ',':
			if top := st.top(); top != nil {
				if top.array {
					top.index++
				} else {
					top.wantKey = true
				}
			}
			i++
		case c == ':':
			if top := st.top(); top != nil && !top.array {
				top.wantKey = false
			}
			i++
		case c == '"':
			top := st.top()
			name := top != nil && !top.array && top.wantKey
			end := walkString(line, i, func(off int, esc string) { bad(st, name, i+1, off, esc) })
			if name {
				top.name = line[i:end]
			}
			i = end
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && size == 1 {
				bad(st, false, -1, i, "")
			}
			i += size
		}
	}
}

// top is the innermost open object or array whose path is kept, or nil.
func (st *state) top() *frame {
	if st.deeper > 0 || len(st.stack) == 0 {
		return nil
	}
	return &st.stack[len(st.stack)-1]
}

// walkString reads the string whose opening quote is at line[i], calls bad
// for each problem in it, and returns the index just past its closing quote
// (len(line) when it has none).
func walkString(line []byte, i int, bad func(off int, esc string)) int {
	j := i + 1
	for j < len(line) {
		c := line[j]
		switch {
		case c == '"':
			return j + 1
		case c == '\\':
			if r, ok := hex4(line, j); ok && r >= 0xd800 && r <= 0xdfff {
				if r < 0xdc00 {
					if r2, ok := hex4(line, j+6); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
						j += 12 // a pair
						continue
					}
				}
				bad(j, string(line[j:j+6]))
				j += 6
				continue
			}
			j++
			if j < len(line) && line[j] < utf8.RuneSelf {
				j++ // the escaped byte; one that is not ASCII is read as any other
			}
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(line[j:])
			if r == utf8.RuneError && size == 1 {
				bad(j, "")
			}
			j += size
		}
	}
	return len(line)
}

// hex4 reads the escape \uXXXX at line[j], if there is one.
func hex4(line []byte, j int) (rune, bool) {
	if j+6 > len(line) || line[j] != '\\' || line[j+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range line[j+2 : j+6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
