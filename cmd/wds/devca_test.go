package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// The local CA that wds dev's worker trusts carries critical name constraints: whatever it signs is
// trusted for loopback names and addresses only, so its key, lying in the data directory, cannot
// vouch for a real site. A CA made before the constraints existed is replaced.
func TestTheDevCAIsConstrainedToLoopback(t *testing.T) {
	dir := t.TempDir()
	unconstrained(t, dir)
	caFile, err := ensureDevCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	ca, key, err := loadDevCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.PermittedDNSDomainsCritical || len(ca.PermittedDNSDomains) == 0 || len(ca.PermittedIPRanges) == 0 {
		t.Fatalf("CA %s constraints: dns %v ips %v critical %v", caFile, ca.PermittedDNSDomains, ca.PermittedIPRanges, ca.PermittedDNSDomainsCritical)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	verify := func(dns string, ip net.IP) error {
		leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "leaf"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		name := dns
		if ip != nil {
			tmpl.IPAddresses, name = []net.IP{ip}, ip.String()
		} else {
			tmpl.DNSNames = []string{dns}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &leafKey.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(der)
		_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name})
		return err
	}
	for _, ok := range []struct {
		dns string
		ip  net.IP
	}{{"localhost", nil}, {"", net.IPv4(127, 0, 0, 1)}, {"", net.IPv4(127, 1, 2, 3)}, {"", net.IPv6loopback}} {
		if err := verify(ok.dns, ok.ip); err != nil {
			t.Errorf("%s %v: %v", ok.dns, ok.ip, err)
		}
	}
	for _, bad := range []struct {
		dns string
		ip  net.IP
	}{{"example.com", nil}, {"bank.test", nil}, {"", net.IPv4(10, 0, 0, 1)}, {"", net.IPv4(8, 8, 8, 8)}, {"", net.ParseIP("2001:db8::1")}} {
		if err := verify(bad.dns, bad.ip); err == nil {
			t.Errorf("a certificate for %s %v verified under the dev CA", bad.dns, bad.ip)
		}
	}
	// What wds listen serves verifies.
	cert, err := localCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("wds listen's certificate for %s: %v", name, err)
		}
	}
}

// unconstrained writes a CA as wds dev made it before it had name constraints.
func unconstrained(t *testing.T, dir string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "wds dev local CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	if err := writePEM(filepath.Join(dir, devCAKeyFile), "EC PRIVATE KEY", keyDER); err != nil {
		t.Fatal(err)
	}
	if err := writePEM(filepath.Join(dir, devCAFile), "CERTIFICATE", der); err != nil {
		t.Fatal(err)
	}
}
