// Package tlstest makes certificate authorities and the certificates they
// sign, written to files, for tests of TLS between programs on 127.0.0.1.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

var serial atomic.Int64

// CA is a certificate authority whose certificate is CertFile.
type CA struct {
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	dir      string
}

// Pair is a certificate and its key, in PEM files.
type Pair struct {
	CertFile, KeyFile string
	Serial            int64
	NotAfter          time.Time
}

// NewCA makes a certificate authority valid for a day, its certificate
// written to a file in dir.
func NewCA(t testing.TB, dir, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{CertFile: filepath.Join(dir, name+"-ca.pem"), cert: cert, key: key, dir: dir}
	writePEM(t, ca.CertFile, "CERTIFICATE", der)
	return ca
}

// Options shape a certificate the CA issues.
type Options struct {
	// Names are the DNS names and IP addresses it is for; default
	// 127.0.0.1 and localhost.
	Names []string
	// NotAfter is when it expires; default a day from now. NotBefore is
	// an hour before now unless NotAfter is in the past.
	NotAfter time.Time
}

// Issue writes a certificate for server and client use, signed by the CA,
// and its key, to files named for name in the CA's directory, replacing
// files of that name.
func (ca *CA) Issue(t testing.TB, name string, o Options) Pair {
	t.Helper()
	key := newKey(t)
	notAfter := o.NotAfter
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	n := serial.Add(1)
	notBefore := time.Now().Add(-time.Hour)
	if notAfter.Before(notBefore) {
		notBefore = notAfter.Add(-time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(n), Subject: pkix.Name{CommonName: name},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	names := o.Names
	if names == nil {
		names = []string{"127.0.0.1", "localhost"}
	}
	for _, nm := range names {
		if ip := net.ParseIP(nm); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, nm)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := Pair{CertFile: filepath.Join(ca.dir, name+".pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem"), Serial: n, NotAfter: notAfter}
	// The key first, then the certificate: a reader that sees the new
	// certificate finds its key.
	writePEM(t, p.KeyFile, "EC PRIVATE KEY", kder)
	writePEM(t, p.CertFile, "CERTIFICATE", der)
	return p
}

// Pool returns a certificate pool holding the CA's certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Load returns the pair as a tls.Certificate.
func (p Pair) Load(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// writePEM writes one PEM block to path through a file renamed into place,
// so that a reader never sees half of it.
func writePEM(t testing.TB, path, kind string, der []byte) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
