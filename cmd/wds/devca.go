package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The local CA of `wds dev`: made once in WDS_DATA_DIR and trusted by its worker, so `wds listen` can
// serve HTTPS with a throwaway certificate the worker accepts, with nothing for a developer to
// install. It exists only on the laptop, and its name constraints (critical) make any certificate it
// signs good for loopback names and addresses only.
const (
	devCAFile    = "listen-ca.pem"
	devCAKeyFile = "listen-ca.key"
)

// loopbackOnly are the CA's name constraints: its key lies in the data directory, so whatever it
// signs must be good for this laptop's loopback names and addresses only, never for a real site.
var loopbackOnly = struct {
	dns []string
	ips []*net.IPNet
}{
	dns: []string{"localhost"},
	ips: []*net.IPNet{{IP: net.IPv4(127, 0, 0, 0).To4(), Mask: net.CIDRMask(8, 32)}, {IP: net.IPv6loopback, Mask: net.CIDRMask(128, 128)}},
}

// ensureDevCA makes the CA on the first call and returns its certificate file. A CA made before it
// carried name constraints is replaced.
func ensureDevCA(dataDir string) (string, error) {
	certFile, keyFile := filepath.Join(dataDir, devCAFile), filepath.Join(dataDir, devCAKeyFile)
	if ca, _, err := loadDevCA(dataDir); err == nil && ca.PermittedDNSDomainsCritical && len(ca.PermittedIPRanges) > 0 {
		return certFile, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("local CA: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "wds dev local CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		PermittedDNSDomainsCritical: true, PermittedDNSDomains: loopbackOnly.dns, PermittedIPRanges: loopbackOnly.ips}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", fmt.Errorf("local CA: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("local CA: %w", err)
	}
	if err := writePEM(keyFile, "EC PRIVATE KEY", keyDER); err != nil {
		return "", err
	}
	return certFile, writePEM(certFile, "CERTIFICATE", der)
}

// localCert issues a certificate for localhost, 127.0.0.1 and ::1 from the local CA, valid a week.
func localCert(dataDir string) (tls.Certificate, error) {
	caCert, caKey, err := loadDevCA(dataDir)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("local certificate: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "wds listen"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(0, 0, 7),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("local certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func loadDevCA(dataDir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dataDir, devCAFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("no local CA in %s: start `wds dev` once (it makes the CA its worker trusts)", dataDir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("local CA: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dataDir, devCAKeyFile))
	if err != nil {
		return nil, nil, fmt.Errorf("local CA key: %w", err)
	}
	cb, kb := pemBlock(certPEM), pemBlock(keyPEM)
	cert, err := x509.ParseCertificate(cb)
	if err != nil {
		return nil, nil, fmt.Errorf("local CA: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb)
	if err != nil {
		return nil, nil, fmt.Errorf("local CA key: %w", err)
	}
	return cert, key, nil
}

func pemBlock(b []byte) []byte {
	if blk, _ := pem.Decode(b); blk != nil {
		return blk.Bytes
	}
	return nil
}

func writePEM(file, typ string, der []byte) error {
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("local CA: %w", err)
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) // crypto/rand does not fail
	return n
}
