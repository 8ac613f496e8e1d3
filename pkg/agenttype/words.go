package agenttype

import "fmt"

// SplitWords splits s into words the way a POSIX shell splits a simple
// command, but performs no expansion of any kind: $VAR, $(…), globs and ~ stay
// literal, because type.conf describes an argv and is never run by a shell.
//
// Blanks (space, tab, newline, carriage return) separate words. Inside single
// quotes every byte is literal. Inside double quotes a backslash escapes only
// \ " $ and ` (any other backslash is kept). Outside quotes a backslash makes
// the next byte literal. Adjacent quoted and unquoted parts join into one
// word, and an empty pair of quotes yields an empty word. An unterminated
// quote or a trailing backslash is an error.
func SplitWords(s string) ([]string, error) {
	var (
		words  []string
		cur    []byte
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			if inWord {
				words = append(words, string(cur))
				cur, inWord = cur[:0], false
			}
		case '\'':
			end := indexByteFrom(s, i+1, '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote at byte %d", i)
			}
			cur = append(cur, s[i+1:end]...)
			inWord, i = true, end
		case '"':
			inWord = true
			start, closed := i, false
			for i++; i < len(s); i++ {
				c = s[i]
				if c == '"' {
					closed = true
					break
				}
				if c == '\\' && i+1 < len(s) {
					switch s[i+1] {
					case '\\', '"', '$', '`':
						i++
						c = s[i]
					}
				}
				cur = append(cur, c)
			}
			if !closed {
				return nil, fmt.Errorf("unterminated double quote at byte %d", start)
			}
		case '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("trailing backslash at byte %d escapes nothing", i)
			}
			i++
			cur = append(cur, s[i])
			inWord = true
		default:
			cur = append(cur, c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, string(cur))
	}
	return words, nil
}

func indexByteFrom(s string, from int, b byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}
