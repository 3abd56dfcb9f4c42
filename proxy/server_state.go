package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kolco-dev/kolco"
)

// The state file keeps what decides the placement of the pools whose
// distribution depends on the history of changes (jump, anchor, dx, ...,
// slots: which servers hold which buckets or slots, and the order of
// removals), so that a proxy restarted on the same configuration, or a
// second one started later beside the file, places every key as the one
// that lived through the changes. It is JSON: for each such pool its
// placement settings, its servers, the algorithm's state (algo.State,
// base64) and the placement's fingerprint (kolco.Fingerprint), which a
// restore must reproduce.

// stateFormat is the version of the state file's format.
const stateFormat = 1

// stateFile is the state file's contents.
type stateFile struct {
	Format int                   `json:"kolco_proxy_state"`
	Pools  map[string]*poolState `json:"pools"`
	// path is where it was read from, or looked for; found, whether
	// there was a file there.
	path  string
	found bool
}

// poolState is one pool's record in the state file.
type poolState struct {
	Distribution string      `json:"distribution"`
	KeyHash      string      `json:"key_hash,omitempty"`
	VNodes       int         `json:"vnodes,omitempty"`
	ZoneAware    bool        `json:"zone_aware,omitempty"`
	Fingerprint  string      `json:"fingerprint"`
	Nodes        []stateNode `json:"nodes"`
	State        []byte      `json:"state"`
	// Moving are the placements a store's move follows, newest first,
	// while it has keys to move (see storeMove).
	Moving []movingState `json:"moving,omitempty"`
	// MovePaused is set while an operator has paused that move's mover:
	// a restart, and a change before the move ends, keep it paused.
	MovePaused bool `json:"move_paused,omitempty"`
	// Afresh is set while keys miss because the placement began without
	// its history (see StateMissing): kept here so that a restart, which
	// restores the fresh placement, still says so.
	Afresh *StateMissing `json:"afresh,omitempty"`
	// Served are the servers a store's pool on a membership source
	// served: a process started again places keys by them until its
	// source's first version, and moves, as a change, the keys that
	// version gives other servers. Without them it would start from its
	// configured servers, which no source named, and read a key whose
	// owner changed while no process ran at its new server before
	// anything moved it there.
	Served []stateNode `json:"served,omitempty"`
	// ServedState and ServedFingerprint are, for a history-dependent
	// distribution, the state (algo.State) and the fingerprint of the
	// placement over Served: a process started again restores it, since
	// one built afresh over the same servers may place keys elsewhere.
	ServedState       []byte `json:"served_state,omitempty"`
	ServedFingerprint string `json:"served_fingerprint,omitempty"`
}

// movingState is a placement a store's move follows: its servers in the
// order the placement takes them, the algorithm's state for kolco's
// distributions, and its signature, which the placement rebuilt from them
// must have.
type movingState struct {
	Distribution string      `json:"distribution"`
	Hash         string      `json:"hash,omitempty"`
	KeyHash      string      `json:"key_hash,omitempty"`
	HashTag      string      `json:"hash_tag,omitempty"`
	VNodes       int         `json:"vnodes,omitempty"`
	Nodes        []stateNode `json:"nodes"`
	State        []byte      `json:"state,omitempty"`
	Signature    string      `json:"signature"`
}

// stateNode is one server of a pool's record.
type stateNode struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
	Zone   string  `json:"zone,omitempty"`
	Addr   string  `json:"addr,omitempty"`
}

// statePath returns where the state file of c is: state_file, taken from
// the configuration file's directory when relative; by default beside the
// configuration file. Empty when c names no file and was read from none.
func (c *Config) statePath() string {
	switch {
	case c.Global.StateFile == "" && c.Path == "":
		return ""
	case c.Global.StateFile == "":
		return c.Path + ".kolco-state"
	case filepath.IsAbs(c.Global.StateFile) || c.Path == "":
		return c.Global.StateFile
	default:
		return filepath.Join(filepath.Dir(c.Path), c.Global.StateFile)
	}
}

// recordOf returns the record of a layout.
func recordOf(l *layout) *poolState {
	ps := &poolState{Distribution: l.settings.Distribution, KeyHash: l.settings.KeyHash, VNodes: l.settings.VNodes,
		ZoneAware: l.settings.ZoneAware, Fingerprint: l.fingerprint, State: l.state()}
	for _, n := range l.nodes {
		ps.Nodes = append(ps.Nodes, stateNode{ID: n.ID, Weight: n.EffectiveWeight(), Zone: n.Zone, Addr: n.Addr})
	}
	return ps
}

func (ps *poolState) settings() settings {
	return settings{Distribution: ps.Distribution, KeyHash: ps.KeyHash, VNodes: ps.VNodes, ZoneAware: ps.ZoneAware}
}

func (ps *poolState) nodes() []kolco.Node {
	nodes := make([]kolco.Node, len(ps.Nodes))
	for i, n := range ps.Nodes {
		nodes[i] = kolco.Node{ID: n.ID, Weight: n.Weight, Zone: n.Zone, Addr: n.Addr}
	}
	return nodes
}

// parseState parses a state file's contents. The error wraps
// ErrBadStateFile.
func parseState(data []byte) (*stateFile, error) {
	var st stateFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadStateFile, jsonErrorAt(data, dec.InputOffset(), err))
	}
	if dec.More() {
		line, col := lineCol(data, dec.InputOffset())
		return nil, fmt.Errorf("%w: line %d, column %d: data after the JSON document", ErrBadStateFile, line, col)
	}
	if st.Format != stateFormat {
		return nil, fmt.Errorf("%w: format %d, want %d (kolco_proxy_state)", ErrBadStateFile, st.Format, stateFormat)
	}
	for name, ps := range st.Pools {
		if ps == nil {
			return nil, fmt.Errorf("%w: pool %q: no record", ErrBadStateFile, name)
		}
	}
	return &st, nil
}

// jsonErrorAt says where in data a JSON decoder stopped with err, at
// offset unless err says where: the line and column, or that the file is
// empty or cut short (a disk that filled, a copy that stopped), which
// "unexpected EOF" alone does not tell.
func jsonErrorAt(data []byte, offset int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return errors.New("the file is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset, err = int64(len(data)), errors.New("the file ends in the middle of its JSON document (cut short?)")
	case errors.As(err, &se):
		offset = se.Offset - 1 // it counts the byte at fault as read
	case errors.As(err, &te):
		offset = te.Offset
	}
	line, col := lineCol(data, offset)
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// lineCol returns the line and column, from 1, of the byte at offset in
// data.
func lineCol(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	return line, int(offset) - bytes.LastIndexByte(before, '\n')
}

// readState reads the state file at path: nil when there is no path, and
// one of no records, not found, when there is no file. The error wraps
// ErrBadStateFile, or is the read error.
func readState(path string) (*stateFile, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &stateFile{path: path}, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := parseState(data)
	if err != nil {
		return nil, err
	}
	st.path, st.found = path, true
	return st, nil
}

// missing says why the pool name of cfg, starting with no pool running
// before it, has no record of its placement's history to start from: ""
// when it has one, or needs none (twemproxy's distributions and the
// history-independent ones need none; a membership source keeps its
// pools' own). It is called when layoutFor restored nothing.
func (st *stateFile) missing(name string, cfg *PoolConfig) string {
	switch {
	case isTwemproxy(cfg) || cfg.Membership != nil || !settingsOf(cfg).historyDependent():
		return ""
	case st == nil:
		return "no state file: kolco.state_file is not set and the configuration was not read from a file"
	case !st.found:
		return "no state file at " + st.path
	case st.Pools[name] == nil:
		return st.path + " has no record of the pool"
	default:
		return st.path + " records the pool with other placement settings"
	}
}

// layoutFor returns the layout the state file records for the pool name
// of cfg, restored: nil when it records none, or one of other placement
// settings, which the configuration replaces (as a reload does). The
// error wraps ErrBadStateFile when the record's servers are not the
// configuration's (IDs and weights; addresses and zones may differ), or
// when it does not restore the placement it records.
func (st *stateFile) layoutFor(name string, cfg *PoolConfig, log *slog.Logger) (*layout, error) {
	if st == nil || st.Pools[name] == nil || isTwemproxy(cfg) || cfg.Membership != nil {
		return nil, nil
	}
	ps := st.Pools[name]
	if ps.settings() != settingsOf(cfg) {
		log.Warn("the state file records the pool with other placement settings: keys placed afresh",
			"pool", name, "recorded", ps.Distribution, "configured", cfg.Distribution)
		return nil, nil
	}
	if rec, conf := serverList(ps.nodes()), serverList(cfg.nodes()); rec != conf {
		return nil, fmt.Errorf("%w: %s records pool %q over %s and the configuration has %s; "+
			"to apply the difference as a change, start with the servers it records and reload the new configuration; "+
			"to place keys afresh, remove the file (keys of the servers that stay may move)", ErrBadStateFile, st.path, name, rec, conf)
	}
	l, err := newLayout(ps.settings(), ps.nodes(), ps.State)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: pool %q: %w", ErrBadStateFile, st.path, name, err)
	}
	if l.fingerprint != ps.Fingerprint {
		return nil, fmt.Errorf("%w: %s: pool %q restores to fingerprint %s, the file records %s (written by another version, or edited)",
			ErrBadStateFile, st.path, name, l.fingerprint, ps.Fingerprint)
	}
	log.Info("placement restored from the state file", "pool", name, "path", st.path, "fingerprint", l.fingerprint)
	return l, nil
}

// serverList describes nodes by what of them decides placement: their IDs
// and weights, in ID order.
func serverList(nodes []kolco.Node) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%s (weight %g)", n.ID, n.EffectiveWeight())
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, ", ") + "]"
}

// poolRecord returns the record of p's placement in the state file: that
// of a history-dependent placement (but on a membership source, which
// keeps its own), the servers of a store on its servers, and the
// placements a store's move follows; nil when there is nothing to record.
func poolRecord(p *pool) *poolState {
	pl := p.place.Load()
	// A store on its servers records them whatever its distribution: a
	// start on a configuration edited meanwhile moves keys from them.
	onServers := p.cfg.Store.Enabled && p.cfg.Membership == nil
	var rec *poolState
	if l := pl.layout(); l != nil && (l.settings.historyDependent() && p.cfg.Membership == nil || pl.move != nil || onServers) {
		rec = recordOf(l)
		rec.Afresh = p.stats.stateMissing.Load()
	}
	if rec == nil && onServers {
		rec = &poolState{Distribution: p.cfg.Distribution, Nodes: stateNodes(nodesOf(pl.servers))}
	}
	if p.cfg.Store.Enabled && p.members != nil && !p.members.placeholder {
		if rec == nil {
			rec = &poolState{Distribution: p.cfg.Distribution, Nodes: stateNodes(nodesOf(pl.servers))}
		}
		rec.Served = stateNodes(p.members.nodes)
		if l := pl.layout(); l != nil && l.settings.historyDependent() {
			rec.KeyHash, rec.VNodes, rec.ZoneAware = l.settings.KeyHash, l.settings.VNodes, l.settings.ZoneAware
			rec.ServedState, rec.ServedFingerprint = l.state(), l.fingerprint
		}
	}
	moving, paused := p.mover.record()
	if moving == nil {
		return rec
	}
	if rec == nil {
		rec = &poolState{Distribution: p.cfg.Distribution, Nodes: stateNodes(nodesOf(pl.servers))}
	}
	rec.MovePaused = paused
	for _, mp := range moving {
		rec.Moving = append(rec.Moving, movingState{Distribution: mp.distribution, Hash: mp.hash, KeyHash: mp.keyHash, HashTag: mp.hashTag,
			VNodes: mp.vnodes, Nodes: stateNodes(mp.nodes), State: mp.state, Signature: mp.sig})
	}
	return rec
}

func stateNodes(nodes []kolco.Node) []stateNode {
	out := make([]stateNode, len(nodes))
	for i, n := range nodes {
		out[i] = stateNode{ID: n.ID, Weight: n.EffectiveWeight(), Zone: n.Zone, Addr: n.Addr}
	}
	return out
}

// afreshFor returns the mark the state file keeps for the pool name whose
// placement began afresh, or nil.
func (st *stateFile) afreshFor(name string) *StateMissing {
	if st == nil || st.Pools[name] == nil {
		return nil
	}
	return st.Pools[name].Afresh
}

// movingFor returns the placements the state file records a store's move
// of the pool name as following, or nil.
func (st *stateFile) movingFor(name string, cfg *PoolConfig) []movePlacement {
	if st == nil || st.Pools[name] == nil || !cfg.Store.Enabled {
		return nil
	}
	var out []movePlacement
	for _, ms := range st.Pools[name].Moving {
		nodes := make([]kolco.Node, len(ms.Nodes))
		for i, n := range ms.Nodes {
			nodes[i] = kolco.Node{ID: n.ID, Weight: n.Weight, Zone: n.Zone, Addr: n.Addr}
		}
		out = append(out, movePlacement{distribution: ms.Distribution, hash: ms.Hash, keyHash: ms.KeyHash, hashTag: ms.HashTag,
			vnodes: ms.VNodes, nodes: nodes, state: ms.State, sig: ms.Signature})
	}
	return out
}

// movePausedFor reports whether the state file records the store's move
// of the pool name as paused.
func (st *stateFile) movePausedFor(name string) bool {
	return st != nil && st.Pools[name] != nil && st.Pools[name].MovePaused
}

// encodeState returns the state file's contents for records.
func encodeState(records map[string]*poolState) []byte {
	data, _ := json.MarshalIndent(stateFile{Format: stateFormat, Pools: records}, "", "  ") // cannot fail
	return append(data, '\n')
}

// writeFileAtomic replaces the file at path with data: written beside it,
// synced and renamed over it, so that a reader, or a crash, sees the old
// file or the new one, never a part.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // the rename itself survives a crash
		d.Close()
	}
	return nil
}

// statesFor reads the state file of cfg when a pool of cfg that is not
// running yet has a history-dependent distribution: such a pool starts
// from its record. The error is a [*ConfigError] for kolco.state_file.
func (s *Server) statesFor(cfg *Config) (*stateFile, error) {
	return readStatesFor(cfg, func(name string) bool { return s.listening.byName[name] != nil })
}

// readStatesFor is statesFor, with running saying which pools run
// already.
func readStatesFor(cfg *Config, running func(name string) bool) (*stateFile, error) {
	need := false
	for name, pc := range cfg.Pools {
		if !running(name) && (pc.Store.Enabled || !isTwemproxy(pc) && pc.Membership == nil && settingsOf(pc).historyDependent()) {
			need = true
		}
	}
	if !need {
		return nil, nil
	}
	path := cfg.statePath()
	st, err := readState(path)
	if err != nil {
		return nil, &ConfigError{Key: GlobalKey + ".state_file", Err: fmt.Errorf("%s: %w", path, err)}
	}
	return st, nil
}

// records returns the state file's records of a prepared transition,
// written before it is committed so that the file never lags what
// serves: a record for each pool of a history-dependent distribution.
func (t *transition) records() map[string]*poolState {
	records := map[string]*poolState{}
	for _, ch := range t.pools {
		p := ch.next
		if p == nil {
			p = ch.cur.pool.Load()
		}
		if rec := poolRecord(p); rec != nil {
			records[ch.name] = rec
		}
	}
	return records
}

// rewriteState writes the state file of the pools the server runs now,
// when one of them has changed its record (a store's move ended).
func (s *Server) rewriteState() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listening.closed {
		return
	}
	records := map[string]*poolState{}
	for name, l := range s.listening.byName {
		if rec := poolRecord(l.pool.Load()); rec != nil {
			records[name] = rec
		}
	}
	if err := writeState(s.cfg.statePath(), records, s.log); err != nil {
		s.log.Error("state file not written", "err", err)
	}
}

// writeState writes records to the state file at path, unless it says
// the same already, or there is nothing to record and no file; with no
// path it warns on log when a record would be lost. The error is a
// [*ConfigError] for kolco.state_file.
func writeState(path string, records map[string]*poolState, log *slog.Logger) error {
	if path == "" {
		if slices.ContainsFunc(slices.Collect(maps.Values(records)), func(r *poolState) bool { return r.State != nil || r.Moving != nil }) {
			log.Warn("no state file: a restart will place the keys of history-dependent pools afresh; set kolco.state_file")
		}
		return nil
	}
	data := encodeState(records)
	old, err := os.ReadFile(path)
	if (err == nil && bytes.Equal(old, data)) || (len(records) == 0 && errors.Is(err, fs.ErrNotExist)) {
		return nil
	}
	if err := writeFileAtomic(path, data); err != nil {
		return &ConfigError{Key: GlobalKey + ".state_file", Err: fmt.Errorf("writing the placement state: %w", err)}
	}
	return nil
}
