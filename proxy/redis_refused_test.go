package proxy

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// TestRedisRefusedListedInDocs holds docs/proxy.md's list of the commands
// the proxy refuses to the command table: every refused command is in a
// row of the list that gives the reason its refusal names.
func TestRedisRefusedListedInDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### Redis commands the proxy refuses\n")
	if !ok {
		t.Fatal("docs/proxy.md has no list of the refused commands")
	}
	var rows []string // the table's
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "|") {
			rows = append(rows, line)
		} else if len(rows) > 0 {
			break
		}
	}
	why := regexp.MustCompile(`is not supported by the proxy: (.*)\r\n$`)
	for i := range redis.NumCommands() {
		cmd := redis.CommandByID(i)
		if cmd.Class() != redis.ClassRefused {
			continue
		}
		name, _, _ := strings.Cut(strings.ToUpper(cmd.Name()), "|")
		reason := why.FindStringSubmatch(cmd.Refusal().Reply)[1]
		word := regexp.MustCompile(`(^|[ |,])` + regexp.QuoteMeta(name) + `([ ,|]|$)`)
		found := false
		for _, row := range rows {
			if word.MatchString(row) && strings.Contains(row, "*"+reason+"*") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s (refused: %s) is not in docs/proxy.md's list with its reason", cmd.Name(), reason)
		}
	}
}
