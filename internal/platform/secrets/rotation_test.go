package secrets

import (
	"errors"
	"strings"
	"testing"
)

func TestRotationOpensOldAndNewAndSealsNew(t *testing.T) {
	oldKey, newKey := GenerateKey(), GenerateKey()
	oldBox, _ := NewBox(oldKey)
	newBox, _ := NewBox(newKey)
	sealedOld, _ := oldBox.Seal([]byte("whsec_old"))

	if _, err := newBox.Open(sealedOld); !errors.Is(err, ErrUndecryptable) {
		t.Fatalf("a box without the previous key opened an old value: %v", err)
	}
	rotating, err := newBox.WithPrevious(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rotating.Open(sealedOld); err != nil || string(got) != "whsec_old" {
		t.Fatalf("old value during rotation: %q %v", got, err)
	}
	sealedNew, _ := rotating.Seal([]byte("whsec_new"))
	if got, err := newBox.Open(sealedNew); err != nil || string(got) != "whsec_new" {
		t.Fatalf("the rotating box did not seal under the new key: %q %v", got, err)
	}
	if _, err := oldBox.Open(sealedNew); err == nil {
		t.Fatal("the previous key opens a value sealed during rotation")
	}
	if rotating.SealedWithCurrent(sealedOld) || !rotating.SealedWithCurrent(sealedNew) {
		t.Fatal("SealedWithCurrent does not tell the keys apart")
	}
	if rotating.SealedWithCurrent([]byte{1, 2, 3}) {
		t.Fatal("a truncated value counts as current")
	}
	// The original box is unchanged: WithPrevious returns a new one.
	if _, err := newBox.Open(sealedOld); err == nil {
		t.Fatal("WithPrevious changed the box it was called on")
	}
}

func TestWithPreviousRejectsABadKeyWithoutEchoingIt(t *testing.T) {
	box, _ := NewBox(GenerateKey())
	bad := "c2hvcnQ=" // base64 of 5 bytes
	_, err := box.WithPrevious(GenerateKey(), bad)
	if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "previous key 2") || strings.Contains(err.Error(), bad) {
		t.Fatalf("err = %v", err)
	}
}
