package fleet

import (
	"fmt"
	"strings"
)

// Verdict is an [Agreement] said in words, the same wherever a fleet's
// agreement is shown (kolco status, a proxy's status page), so that two
// views of one fleet never word it differently.
type Verdict struct {
	// State is "agree" (every process answered and all place alike, and
	// not every one may be behind its store), "differ" (one places
	// otherwise) or "unknown" (one could not be asked, or every one may
	// be behind its store).
	State string
	// Text says it in a sentence without the reference placement, which
	// the caller shows as it shows placements: "all 3 proxies agree",
	// "the proxies DO NOT AGREE: 2 of 3 place alike, 1 differs".
	Text string
}

// Verdict returns a's verdict. It counts the processes compared from a
// itself - those that agree, differ and could not be asked - so that no
// caller can count them otherwise.
func (a Agreement) Verdict() Verdict {
	n := len(a.Agreeing) + len(a.Differing) + len(a.Unreachable)
	answered := len(a.Agreeing) + len(a.Differing)
	switch {
	case n == 0:
		return Verdict{"unknown", "agreement unknown: no proxy to compare"}
	case a.Agree() && len(a.Stale) == answered:
		if n == 1 {
			return Verdict{"unknown", "agreement unknown: the 1 proxy is stale (it may be behind its source)"}
		}
		return Verdict{"unknown", fmt.Sprintf("agreement unknown: all %d proxies are stale (they agree, but may be behind their source)", n)}
	case a.Agree():
		text := fmt.Sprintf("all %d proxies agree", n)
		if n == 1 {
			text = "1 proxy, none to compare it with"
		}
		if len(a.Stale) > 0 {
			text += fmt.Sprintf("; %d may be behind their source", len(a.Stale))
		}
		return Verdict{"agree", text}
	case len(a.Differing) > 0:
		parts := []string{fmt.Sprintf("%d of %d place alike", len(a.Agreeing), n), count(len(a.Differing), "differs", "differ")}
		if len(a.Unreachable) > 0 {
			parts = append(parts, fmt.Sprintf("%d did not answer", len(a.Unreachable)))
		}
		return Verdict{"differ", "the proxies DO NOT AGREE: " + strings.Join(parts, ", ")}
	case answered == 0:
		return Verdict{"unknown", fmt.Sprintf("agreement unknown: none of %d proxies answered", n)}
	}
	return Verdict{"unknown", fmt.Sprintf("agreement unknown: %d of %d answered and agree, %d did not answer", answered, n, len(a.Unreachable))}
}

// count says n with the verb for one or for many.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
