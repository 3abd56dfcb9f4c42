package etcd_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
)

// TestTLSAndAuth: a store reaches etcd over TLS, trusting its CA file,
// and authenticates with a user and password; wrong credentials or an
// untrusted server fail with a clear error.
func TestTLSAndAuth(t *testing.T) {
	checkNoLeak(t)
	cert := etcdtest.NewCert(t)
	srv := etcdtest.Start(t, etcdtest.Config{CertFile: cert.CertFile, KeyFile: cert.KeyFile})
	enableAuth(t, srv, cert, "root", "s3cret")

	cfg := etcd.Config{Endpoints: []string{srv.Endpoint}, Prefix: "/kolco/tls/", CAFile: cert.CertFile, Username: "root", Password: "s3cret"}
	s := newStoreWith(t, cfg)
	if _, err := s.Apply(ctx(t), 1, etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "a"}}}}); err != nil {
		t.Fatal(err)
	}
	w := watch(t, s)
	if v := next(t, w); !slices.Equal(v.IDs(), []string{"a"}) {
		t.Fatalf("first version %v", v)
	}
	if _, err := s.Update(ctx(t), func(etcd.Listing) (etcd.Edit, error) {
		return etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "b"}}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if v := next(t, w); !slices.Equal(v.IDs(), []string{"a", "b"}) {
		t.Fatalf("second version %v", v)
	}

	for _, c := range []struct {
		name   string
		modify func(*etcd.Config)
		want   error
	}{
		{"wrong password", func(c *etcd.Config) { c.Password = "wrong" }, rpctypes.ErrAuthFailed},
		{"no credentials", func(c *etcd.Config) { c.Username, c.Password = "", "" }, rpctypes.ErrUserEmpty},
		{"untrusted server", func(c *etcd.Config) { c.CAFile = ""; c.TLS = &tls.Config{} }, x509.UnknownAuthorityError{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := cfg
			c.modify(&bad)
			// A second, stretched by the load: at 8 busy processes on 2
			// cores the handshake and the refused authentication took
			// longer, and the wrong password read as a timeout.
			bad.Timeout = time.Duration(busy * float64(time.Second))
			_, err := newStoreWith(t, bad).Read(ctx(t))
			if !errors.Is(err, membership.ErrUnreachable) || !matches(err, c.want) {
				t.Errorf("got %v, want ErrUnreachable and %T %[2]v", err, c.want)
			}
		})
	}
}

// matches reports whether err wraps want, or an error of want's type.
func matches(err, want error) bool {
	if errors.Is(err, want) {
		return true
	}
	var u x509.UnknownAuthorityError
	_, isUnknown := want.(x509.UnknownAuthorityError)
	return isUnknown && errors.As(err, &u)
}

// enableAuth adds a root user and turns etcd's auth on.
func enableAuth(t *testing.T, srv *etcdtest.Server, cert etcdtest.Cert, user, password string) {
	t.Helper()
	pem, err := os.ReadFile(cert.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint}, TLS: &tls.Config{RootCAs: pool}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.UserAdd(ctx(t), user, password); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.UserGrantRole(ctx(t), user, "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.AuthEnable(ctx(t)); err != nil {
		t.Fatal(err)
	}
}
