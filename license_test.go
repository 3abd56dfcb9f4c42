package kolco_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"testing"
)

// apacheSHA256 is the SHA-256 of the Apache License 2.0 as the Apache
// Software Foundation publishes it (www.apache.org/licenses/LICENSE-2.0.txt,
// Debian's /usr/share/common-licenses/Apache-2.0), its appendix's
// copyright line left as "Copyright [yyyy] [name of copyright owner]".
const apacheSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestLicense: LICENSE is the Apache License 2.0, whole and unchanged, its
// appendix naming the kolco authors, as twemproxy's and etcd's do theirs.
func TestLicense(t *testing.T) {
	data, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	owner := regexp.MustCompile(`(?m)^   Copyright \d{4} The kolco authors$`)
	if len(owner.FindAll(data, -1)) != 1 {
		t.Fatal("LICENSE has no line \"   Copyright YYYY The kolco authors\"")
	}
	template := owner.ReplaceAll(data, []byte("   Copyright [yyyy] [name of copyright owner]"))
	if sum := sha256.Sum256(template); hex.EncodeToString(sum[:]) != apacheSHA256 {
		t.Error("LICENSE is not the Apache License 2.0 as published")
	}
}
