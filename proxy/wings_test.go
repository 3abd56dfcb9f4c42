package proxy

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// The package's files are its map: each belongs to a wing by its name's
// prefix, and a wing may use only what the wings below it declare, as
// floors_test.go holds the module's packages to their floors. The rule is
// read off the code by the type checker: every identifier a file uses
// that another file of the package declares (a type, function, method,
// field, constant or variable) must come from the file's own wing or one
// it may use. So the engine names neither protocol, the two fronts never
// reach into each other, and only each front imports its codec.
var wings = []struct {
	prefix string // a file name, or the start of one
	wing   string
}{
	{"doc.go", "doc"},
	{"errors.go", "config"}, {"config", "config"},
	// The engine: pools, their clients' requests and budgets (pool_),
	// placement and routing (place_), servers and their connections
	// (backend_), changes' windows (migration_), and the sockets' raw
	// system calls with their portable twin (io_).
	{"pool", "engine"}, {"place", "engine"}, {"backend", "engine"}, {"migration", "engine"}, {"io_", "engine"},
	{"mc_", "memcached"}, {"redis_", "redis"},
	{"source", "source"},
	{"admin", "admin"},
	{"server_fronts.go", "fronts"}, {"server", "server"},
}

// mayUse lists the wings each wing may use besides its own.
var mayUse = map[string][]string{
	"doc":       nil,
	"config":    nil,
	"engine":    {"config"},
	"memcached": {"config", "engine"},
	"redis":     {"config", "engine"},
	"source":    {"config", "engine"},
	// What an operator sees: the admin endpoint, status page, stats port
	// and metrics read the running server.
	"admin":  {"config", "engine", "source", "server"},
	"server": {"config", "engine", "source", "admin", "fronts"},
	// The one place that names the fronts, to pick a pool's.
	"fronts": {"config", "engine", "memcached", "redis"},
}

// codecs are the protocol packages, and the wings that may import each.
var codecs = map[string][]string{
	module + "/proxy/memcache": {"memcached"},
	// The file format knows Redis's largest value, a pool's default.
	module + "/proxy/redis": {"redis", "config"},
}

const module = "github.com/kolco-dev/kolco"

// wingOf returns the wing of a file of the package by its name, or "".
func wingOf(file string) string {
	best, wing := -1, ""
	for _, w := range wings {
		if strings.HasPrefix(file, w.prefix) && len(w.prefix) > best {
			best, wing = len(w.prefix), w.wing
		}
	}
	return wing
}

// The engine's parts, by their files' prefixes, and which part may use
// which: placement and servers below the pool, a socket's system calls
// at the bottom, and a change's window over all of them.
var parts = []struct {
	prefix string
	part   string
}{
	{"pool", "pool"}, {"place", "place"}, {"backend", "backend"}, {"migration", "migration"}, {"io_", "io"},
}

// partMayUse lists the parts of the engine each part may use besides its
// own. Only the parts that hold sockets (a client's, a server's) use the
// raw system calls, and those use nothing of the engine. The pool is
// every part's context (its configuration, log, front), and placement,
// servers and windows still reach into each other: their widths below
// hold those seams from growing.
var partMayUse = map[string][]string{
	"pool":      {"place", "backend", "migration", "io"},
	"place":     {"pool", "backend", "migration"},
	"backend":   {"pool", "place", "migration", "io"},
	"migration": {"pool", "place", "backend"},
	"io":        nil,
}

// widths is how many names (types, functions, methods, fields, constants,
// variables) each wing uses of another, and each part of the engine of
// another: a seam's width. Each is set at what the code reaches; a change
// that widens a seam fails until it narrows another name away, or the
// budget is raised with the reason in the commit. A pair not listed may
// use nothing of the other.
var widths = map[string]int{
	// Between the wings.
	// 73: the traffic sample explains itself (Traffic.explain), as
	// hot_keys does: its field and method where one PoolConfig method was.
	"admin -> config": 73,
	// 159: the membership status reports a pool's late writes
	// (pool.lateWrites) as retiring, so the fleet's moves wait for them;
	// a server's rejoin is asked of the pool's outages (pool.outages,
	// outages.rejoinEmptied), where it was a method of the pool.
	// 162: the servers' shares are asked of the pool's placing
	// (pool.placing), and a pool's traffic status is its sample's
	// (trafficSample.status): both were methods of the pool.
	// 159: the store's move is reported and paused through the pool's
	// keyMoves (status, pause), not its fields.
	"admin -> engine": 159,
	"admin -> server": 22,
	"admin -> source": 12,
	// 64: a store's move, with its settings (store.*), is the redis
	// wing's (redis_store_*.go).
	"engine -> config":    64,
	"fronts -> config":    2,
	"fronts -> engine":    1,
	"fronts -> memcached": 1,
	"fronts -> redis":     1,
	// 23: the sweep is a type of its own (mcSweep), which keeps the pool's
	// configuration (PoolConfig) it was given. 28: the front reads the warm
	// settings (warm.enabled, depth, window, quiet) the engine read before,
	// and gives the engine its changes' rules (front.changes): engine ->
	// config went from 77 to 72.
	"memcached -> config": 28,
	// 170: a read asks the pool's outages whether a server is out
	// (outages.count) before it calls into the fences (fenceReads), so
	// that a read while every server is up runs nothing of them. 171: the
	// front makes its pool's store moves (front.moves): none, noMoves of
	// the keyMoves seam, where it refused the mover's moveJob. 172: a
	// window's fallback asks the placement whether the server it would
	// copy a value to stands in for one out (placement.standsIn), since
	// no return settles or removes such a copy.
	"memcached -> engine": 172,
	// A store's big-key bounds (store.big_key_elements, big_key_bytes).
	// 53: a store's move and its mover, with their settings (store.*),
	// moved here from the engine (redis_store_*.go).
	"redis -> config": 53,
	// A big key's copy (storeMover.copyKey; keyCopy's await, sendRead and
	// release, the client's field of one; moveJob.bigKey); client.connState:
	// a client's protocol, authentication and name across a handover.
	// 166: a request's MIGRATE records the key it took off its old
	// server (storeMove.tookOff). 167: the copies and MIGRATE roles are
	// the pool's mover's (pool.mover), no longer the pool's own fields.
	// A read asks whether a server is out (outages.count) before
	// the fences, as a memcached read does. 243: a store's move and its
	// mover moved here from the engine's migration part
	// (redis_store_*.go), with what they use of the pool, placement and
	// servers; the engine uses none of theirs (keyMoves).
	"redis -> engine": 243,
	"server -> admin": 14,
	// 76: a start on a state file of other servers serves the pool over
	// them (overNodes).
	"server -> config": 76,
	// A reload hands the pool's big keys' copies on, as its roles;
	// client.connState, given to an adopted client.
	// 126: a reload hands the pool's late writes on (pool.lateWrites).
	// 128: a reload halts the replaced pool's sweep through its windows
	// (pool.mig) and sets the state file's hook on the pool's placing
	// (pool.placing, placing.saveState), where they were the pool's
	// haltSweep and onStateChange.
	// 125: the state file records, and a reload hands on, a store's move
	// through the pool's keyMoves (record, inherit), not its fields.
	"server -> engine": 125,
	"server -> fronts": 1,
	"server -> source": 21,
	"source -> config": 57,
	"source -> engine": 20,
	// Between the engine's parts.
	"backend -> io": 2,
	// 14: a return after a change it missed judges each change's two
	// placements with every server up (placesOn: placement.pick, and
	// picker.Index). 15: a journal taken over by a pool that places
	// every key as the one replaced (placesAlike: a failover) stays sure.
	// 17: a return reads its own keys from the one stand-in out every
	// write went to (placement.ownsPassedOver), and notes the keys it
	// leaves on a server in the outages of the servers still out whose
	// returns take them from there (placement.returnTakes: with both up,
	// kolco's placement passing over the servers down, twemproxy's placing
	// afresh). 18: a read at a server a twemproxy pool's return leaves a
	// key on is fenced when the key was noted (placement.full: a change
	// or another mark while the server is out sends keys back to where
	// they were before).
	"backend -> place": 18,
	// 1: the watchdog times out the connections of the pool's former
	// servers too (migrations.watched), which a store's move reads and
	// MIGRATEs keys from.
	"backend -> migration": 1,
	// A timed-out connection counts in its pool's late writes
	// (pool.lateWrites), which a store's move waits for. 30: the
	// watchdog reaches the former servers through the pool's windows
	// (pool.mig).
	"backend -> pool": 30,
	// A big key's copy sends its delete on the key's connection (op,
	// sendKeyed).
	// 10: a store's move is the redis wing's.
	"migration -> backend": 10,
	// 27: the windows and a store's move take the lock of the
	// placement's writers from the pool's placing (placing.mu), where it
	// was the pool's placeMu.
	// 13: a store's move is the redis wing's.
	"migration -> place": 13,
	// The windows ask the front for the rules of the pool's changes
	// (front.changes), where they read its warm and sweep settings; the
	// mover reads the pool's late writes (pool.lateWrites).
	// 18: a store's move is the redis wing's.
	"migration -> pool": 18,
	"place -> backend":  5,
	// 3: a store's move is the redis wing's. 4: placesAlike compares
	// signatures without their servers' part (serversSignature).
	"place -> migration": 4,
	// A change's placement is built and published by placing, which is
	// given what it reads of the pool (see placing), where it read the
	// pool's fields: what is left is the lookup of a server by name
	// (backendNamed), which a store's move asks of it.
	// 3: a placement carries its store's move as a keyMove, whose end
	// it asks (ended), of the pool's seam (pool_moves.go).
	"place -> pool": 3,
	// The pool makes its outages and health checks (their types,
	// newOutages, newHealthChecks), gives its outages its context as it
	// starts and the returns lock of the pool it replaces (ctx,
	// returns), and shares the journals of the servers it inherits down
	// (share); their methods were the pool's. 41: only the pool serving
	// settles a return (outages.held, set as one pool replaces another).
	"pool -> backend": 41,
	"pool -> io":      1,
	// The pool holds its store's mover (storeMover).
	// 13: the pool holds its store's moves as keyMoves, no longer the
	// migration part's storeMover. 14: the pool gives its migrations the
	// pool it replaces (migrations.follow), whose requests in flight its
	// sweep waits for.
	"pool -> migration": 14,
	// The pool gives its health checks its rebuild, which they called as
	// its method. 23: the pool makes its placing (newPlacing, placing),
	// gives it its windows and mover (mig, mover), and gives its outages,
	// health checks and afresh check placing's restoreChange and
	// stateChanged, which were the pool's own methods.
	// 24: keyMoves includes what placing asks of a store's moves
	// (placeMoves).
	"pool -> place": 24,
}

// listenCalls are the functions that open a listening socket; only the
// server wing calls them, so that every socket the process serves on is
// one the server knows, hands over and closes.
var listenCalls = map[string][]string{
	"net":     {"Listen", "ListenPacket", "ListenTCP", "ListenUDP", "ListenUnix", "ListenUnixgram", "ListenIP", "ListenMulticastUDP", "FileListener", "FilePacketConn"},
	"syscall": {"Listen", "Socket"},
}

// partOf returns the engine's part of a file of the package, or "".
func partOf(file string) string {
	for _, p := range parts {
		if wingOf(file) == "engine" && strings.HasPrefix(file, p.prefix) {
			return p.part
		}
	}
	return ""
}

// sideOf names a file's side of a seam: its engine part for an engine
// file, else its wing.
func sideOf(file string) string {
	if p := partOf(file); p != "" {
		return p
	}
	return wingOf(file)
}

// TestWings holds the package's files to the wings' rules, the engine's
// parts to theirs, the seams to their widths and the listening sockets to
// the server wing.
// With -v it prints each seam's width beside its budget, and a budget
// the code no longer reaches is to be lowered to the width.
func TestWings(t *testing.T) {
	t.Parallel() // reads files only; 9 s of the package's serial start at load 15
	for _, v := range wingViolations(t, nil) {
		t.Error(v)
	}
	if !testing.Verbose() {
		return
	}
	w := uses(t, nil)
	for _, k := range slices.Sorted(maps.Keys(w)) {
		t.Logf("%-24q %3d (budget %d)", k, w[k], widths[k])
	}
}

// TestWingsCatchViolations: a planted engine file that names the
// memcached front and imports Redis's codec, a file of no wing, a part of
// the engine using one it may not, a new name the memcached front uses of
// the engine, and a listening socket opened in the config wing are
// reported, each for what it does. In parallel, after the serial tests:
// TestWings, the one other reader of the widths it sets, has ended.
func TestWingsCatchViolations(t *testing.T) {
	t.Parallel()
	// The memcached front's budget at its width, wherever it is set: one
	// name more is over it.
	k := "memcached -> engine"
	n, budget := uses(t, nil)[k], widths[k]
	widths[k] = n
	defer func() { widths[k] = budget }()
	got := wingViolations(t, map[string]string{
		"pool_planted.go": `package proxy

import "github.com/kolco-dev/kolco/proxy/redis"

var plantedFront front = memcacheFront{}

var plantedCommands = redis.NumCommands

func plantedEngineName() {}
`,
		"planted.go":    "package proxy\n",
		"io_planted.go": "package proxy\n\nvar plantedPool *pool\n",
		"mc_planted.go": "package proxy\n\nvar plantedWidth = plantedEngineName\n",
		"config_planted.go": `package proxy

import "net"

var plantedListen = net.Listen
`,
	})
	want := []string{
		"config_planted.go (config) opens a listening socket (net.Listen): only the server wing does",
		"io_planted.go (io) uses pool of pool.go (pool)",
		fmt.Sprintf("memcached uses %d names of engine, its budget is %d (wings_test.go widths)", n+1, n),
		"planted.go has no wing: name it for one (see wings_test.go)",
		"pool_planted.go (engine) imports " + module + "/proxy/redis",
		"pool_planted.go (engine) uses memcacheFront of mc_front.go (memcached)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checked is the package type-checked, with extra files added by name.
type checked struct {
	fset  *token.FileSet
	files []*ast.File
	pkg   *types.Package
	info  *types.Info
}

// check type-checks the package's files, with extra files added by name.
func check(t *testing.T, extra map[string]string) checked {
	t.Helper()
	c := checked{fset: token.NewFileSet(), info: &types.Info{Uses: map[*ast.Ident]types.Object{}}}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(".", name); err != nil || !ok {
			continue // another platform's, or a build tag's twin
		}
		f, err := parser.ParseFile(c.fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		c.files = append(c.files, f)
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		f, err := parser.ParseFile(c.fset, name, extra[name], parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		c.files = append(c.files, f)
	}
	conf := types.Config{Importer: exportImporter(t, c.fset)}
	if c.pkg, err = conf.Check(module+"/proxy", c.fset, c.files, c.info); err != nil {
		t.Fatal(err)
	}
	return c
}

// use is one name a file uses of another file of the package.
type use struct {
	user, owner string // the files
	obj         types.Object
}

// uses returns the widths of the package's seams as they are, with extra
// files added: "user -> owner" to the number of names.
func uses(t *testing.T, extra map[string]string) map[string]int {
	t.Helper()
	return widthsOf(check(t, extra).uses())
}

// uses returns every name a file uses of another file of the package,
// each once.
func (c checked) uses() []use {
	seen := map[use]bool{}
	var out []use
	for id, obj := range c.info.Uses {
		if obj.Pkg() != c.pkg || !obj.Pos().IsValid() {
			continue
		}
		u := use{c.fset.Position(id.Pos()).Filename, c.fset.Position(obj.Pos()).Filename, obj}
		if u.user != u.owner && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// widthsOf counts the names each side of a seam uses of the other: a
// wing of another wing, a part of the engine of another part.
func widthsOf(us []use) map[string]int {
	names := map[string]map[types.Object]bool{}
	for _, u := range us {
		a, b := sideOf(u.user), sideOf(u.owner)
		if partOf(u.user) == "" || partOf(u.owner) == "" {
			a, b = wingOf(u.user), wingOf(u.owner)
		}
		if a == "" || b == "" || a == b {
			continue
		}
		k := a + " -> " + b
		if names[k] == nil {
			names[k] = map[types.Object]bool{}
		}
		names[k][u.obj] = true
	}
	out := map[string]int{}
	for k, set := range names {
		out[k] = len(set)
	}
	return out
}

// wingViolations type-checks the package's files, with extra files added
// by name, and returns what breaks the wings' rules, sorted.
func wingViolations(t *testing.T, extra map[string]string) []string {
	t.Helper()
	c := check(t, extra)
	var out []string
	for _, f := range c.files {
		name := c.fset.Position(f.Pos()).Filename
		if wingOf(name) == "" {
			out = append(out, fmt.Sprintf("%s has no wing: name it for one (see wings_test.go)", name))
			continue
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if allowed, ok := codecs[path]; ok && !slices.Contains(allowed, wingOf(name)) {
				out = append(out, fmt.Sprintf("%s (%s) imports %s", name, wingOf(name), path))
			}
		}
	}
	seen := map[string]bool{}
	add := func(v string) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for id, obj := range c.info.Uses {
		if obj.Pkg() == nil || obj.Pkg() == c.pkg || !slices.Contains(listenCalls[obj.Pkg().Path()], obj.Name()) {
			continue
		}
		if user := c.fset.Position(id.Pos()).Filename; wingOf(user) != "server" {
			add(fmt.Sprintf("%s (%s) opens a listening socket (%s.%s): only the server wing does", user, sideOf(user), obj.Pkg().Name(), obj.Name()))
		}
	}
	us := c.uses()
	for _, u := range us {
		uw, ow := wingOf(u.user), wingOf(u.owner)
		up, op := partOf(u.user), partOf(u.owner)
		switch {
		case uw == "":
		case uw != ow && !slices.Contains(mayUse[uw], ow):
			add(fmt.Sprintf("%s (%s) uses %s of %s (%s)", u.user, uw, u.obj.Name(), u.owner, ow))
		case up != "" && op != "" && up != op && !slices.Contains(partMayUse[up], op):
			add(fmt.Sprintf("%s (%s) uses %s of %s (%s)", u.user, up, u.obj.Name(), u.owner, op))
		}
	}
	for k, n := range widthsOf(us) {
		a, b, _ := strings.Cut(k, " -> ")
		allowed := slices.Contains(mayUse[a], b) || slices.Contains(partMayUse[a], b)
		if n > widths[k] && allowed { // a use the rules refuse is reported by name above
			add(fmt.Sprintf("%s uses %d names of %s, its budget is %d (wings_test.go widths)", a, n, b, widths[k]))
		}
	}
	slices.Sort(out)
	return out
}

// exportImporter returns an importer that reads the packages the proxy
// imports from the export data the go command builds for them.
func exportImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	exports, err := exportFiles()
	if err != nil {
		t.Fatal(err)
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// exportFiles maps the packages the proxy imports to their export data,
// asked of the go command once for every test that type-checks. It asks
// for the imports' export data, not the proxy's own: the checker reads
// the proxy from its source, and "go list -export ." compiled the
// package's non-test build, which go test never needs - a compile of the
// whole package (25 of TestWings's 25.2 s at load 24) after every change
// to its source.
var exportFiles = sync.OnceValues(func() (map[string]string, error) {
	imports, err := testproc.Output(exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", "."))
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, strings.Fields(string(imports))...)
	out, err := testproc.Output(exec.Command("go", args...))
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return exports, nil
})
