package groupcachepeers

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/golang/groupcache"
	pb "github.com/golang/groupcache/groupcachepb"
	"github.com/golang/protobuf/proto"
)

// ServeHTTP serves this peer's groups to the other peers, as HTTPPool
// does: GET <base path><group>/<key> answers the group's value for key as
// a protobuf GetResponse. A path outside the base path is not found (where
// HTTPPool panics), one without a key a bad request.
func (p *Picker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, key, err := parsePath(r.URL.Path, p.basePath())
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	group := groupcache.GetGroup(name)
	if group == nil {
		http.Error(w, "no such group: "+name, http.StatusNotFound)
		return
	}
	group.Stats.ServerRequests.Add(1)
	var value []byte
	if err := group.Get(r.Context(), key, groupcache.AllocatingByteSliceSink(&value)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body, err := proto.Marshal(&pb.GetResponse{Value: value})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(body)
}

// parsePath splits an unescaped request path under base into the group's
// name and the key, which may hold slashes; the name may not be empty.
func parsePath(path, base string) (group, key string, err error) {
	rest, ok := strings.CutPrefix(path, base)
	if !ok {
		return "", "", fmt.Errorf("groupcachepeers: %q is not under %q", path, base)
	}
	group, key, ok = strings.Cut(rest, "/")
	if !ok || group == "" {
		return "", "", fmt.Errorf("groupcachepeers: %q names no group and key", path)
	}
	return group, key, nil
}

// readResponse decodes a peer's answer into out.
func readResponse(res *http.Response, out *pb.GetResponse) error {
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("groupcachepeers: peer answered %s", res.Status)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("groupcachepeers: reading the peer's answer: %w", err)
	}
	if err := proto.Unmarshal(body, out); err != nil {
		return fmt.Errorf("groupcachepeers: decoding the peer's answer: %w", err)
	}
	return nil
}
