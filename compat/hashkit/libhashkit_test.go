package hashkit_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// libhashkitProgram reads hex-encoded keys, one a line, and prints for each
// the value of every libhashkit_<fn> and of hashkit_digest after
// hashkit_set_function, in the order of libhashkitColumns.
const libhashkitProgram = `
#include <libhashkit-1.0/hashkit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hashkit_hash_algorithm_t algos[] = {
	HASHKIT_HASH_DEFAULT, HASHKIT_HASH_MD5, HASHKIT_HASH_CRC, HASHKIT_HASH_FNV1_64,
	HASHKIT_HASH_FNV1A_64, HASHKIT_HASH_FNV1_32, HASHKIT_HASH_FNV1A_32,
	HASHKIT_HASH_HSIEH, HASHKIT_HASH_MURMUR, HASHKIT_HASH_JENKINS, HASHKIT_HASH_MURMUR3,
};
#define NALGO (sizeof(algos) / sizeof(algos[0]))

static int unhex(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

int main(void) {
	static char line[1 << 16], key[1 << 15];
	hashkit_st kits[NALGO];
	for (size_t i = 0; i < NALGO; i++) {
		hashkit_create(&kits[i]);
		hashkit_set_function(&kits[i], algos[i]);
	}
	printf("has_hsieh %d\n", libhashkit_has_algorithm(HASHKIT_HASH_HSIEH) ? 1 : 0);
	while (fgets(line, sizeof line, stdin)) {
		size_t n = strcspn(line, "\n") / 2;
		for (size_t i = 0; i < n; i++) key[i] = (char)(unhex(line[2*i]) << 4 | unhex(line[2*i+1]));
		printf("%u %u %u %u %u %u %u %u %u %u %u", libhashkit_one_at_a_time(key, n),
			libhashkit_md5(key, n), libhashkit_crc32(key, n), libhashkit_fnv1_64(key, n),
			libhashkit_fnv1a_64(key, n), libhashkit_fnv1_32(key, n), libhashkit_fnv1a_32(key, n),
			libhashkit_hsieh(key, n), libhashkit_murmur(key, n), libhashkit_jenkins(key, n),
			libhashkit_murmur3(key, n));
		for (size_t i = 0; i < NALGO; i++) printf(" %u", hashkit_digest(&kits[i], key, n));
		printf("\n");
	}
	return 0;
}
`

// libhashkitColumns names the functions in the program's column order.
var libhashkitColumns = []string{"default", "md5", "crc", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins", "murmur3"}

// buildC compiles a C program against libmemcached/libhashkit into a temp
// dir. It skips the test when cc or the headers are missing, unless CI=true.
func buildC(t *testing.T, src string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		skipOrFail(t, "cc not found (install build-essential)")
	}
	if _, err := os.Stat("/usr/include/libhashkit-1.0/hashkit.h"); err != nil {
		skipOrFail(t, "libhashkit headers not found (install libmemcached-dev libsasl2-dev)")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "prog.c")
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(c, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := testproc.CombinedOutput(exec.Command(cc, "-O1", "-o", bin, c, "-lmemcached", "-lhashkit"))
	if err != nil {
		skipOrFail(t, "cannot build against libmemcached (install libmemcached-dev libsasl2-dev): "+err.Error()+"\n"+string(out))
	}
	return bin
}

func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// randomKeys returns n keys from a fixed seed: the empty key, every
// single byte, random bytes of lengths 0..300 across the whole byte range,
// and a few long keys.
func randomKeys(n int) [][]byte {
	r := rand.New(rand.NewPCG(4, 2026))
	keys := [][]byte{{}, []byte("apple")}
	for b := 0; b < 256; b++ {
		keys = append(keys, []byte{byte(b)})
	}
	for _, l := range []int{1000, 4096, 12, 13, 24, 25} {
		k := make([]byte, l)
		for i := range k {
			k[i] = byte(r.IntN(256))
		}
		keys = append(keys, k)
	}
	for len(keys) < n {
		k := make([]byte, r.IntN(301))
		for i := range k {
			k[i] = byte(r.IntN(256))
		}
		keys = append(keys, k)
	}
	return keys
}

// TestLibhashkit compares every function with the installed libhashkit, both
// its libhashkit_<fn> entry points and hashkit_digest, over 5000 keys.
func TestLibhashkit(t *testing.T) {
	bin := buildC(t, libhashkitProgram)
	keys := randomKeys(5000)
	var in bytes.Buffer
	for _, k := range keys {
		in.WriteString(hex.EncodeToString(k))
		in.WriteByte('\n')
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	out, err := testproc.Output(cmd)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Scan()
	hasHsieh := strings.TrimSpace(sc.Text()) == "has_hsieh 1"
	funcs := make([]hashkit.Func, len(libhashkitColumns))
	for i, name := range libhashkitColumns {
		funcs[i], _ = hashkit.Parse(name)
	}
	mismatches, compared, lines := 0, 0, 0
	for i := 0; sc.Scan(); i++ {
		lines++
		f := strings.Fields(sc.Text())
		if i >= len(keys) || len(f) != 2*len(funcs) {
			t.Fatalf("line %d: unexpected output %q", i, sc.Text())
		}
		for j, fn := range funcs {
			if libhashkitColumns[j] == "hsieh" && !hasHsieh {
				continue
			}
			want := fn(keys[i])
			for _, col := range []string{f[j], f[j+len(funcs)]} {
				got, _ := strconv.ParseUint(col, 10, 32)
				compared++
				if uint32(got) != want {
					if mismatches++; mismatches < 10 {
						t.Errorf("%s(%x): libhashkit %d, Go %d", libhashkitColumns[j], keys[i], got, want)
					}
				}
			}
		}
	}
	if lines != len(keys) {
		t.Fatalf("libhashkit answered %d of %d keys", lines, len(keys))
	}
	t.Logf("%d keys, %d values compared, %d mismatches (hsieh in libhashkit: %v)", len(keys), compared, mismatches, hasHsieh)
	if mismatches > 0 {
		t.Errorf("%d mismatches", mismatches)
	}
}
