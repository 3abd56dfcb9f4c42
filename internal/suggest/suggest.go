// Package suggest finds the name a user most likely meant: the command
// line's flags and commands, a configuration file's keys. One function for
// both, so that a misspelt flag and a misspelt key get the same answer.
package suggest

import "strings"

// Nearest returns the name of names closest to typed: one it starts, or
// one within a few edits (a third of its length, at least one); "" when
// none is near.
func Nearest(typed string, names []string) string {
	best, bestDist := "", 0
	for _, n := range names {
		if typed == "" {
			continue
		}
		d := editDistance(strings.ToLower(typed), strings.ToLower(n))
		if strings.HasPrefix(n, typed) {
			d = min(d, 1)
		}
		if d <= max(1, len(n)/3) && (best == "" || d < bestDist) {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance returns the Levenshtein distance between a and b, with a
// swap of two neighbouring characters counting as one edit.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2, prev, cur := make([]int, len(y)+1), make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
