package models_test

import (
	"testing"

	"wds/models"
)

func TestAllowsIP(t *testing.T) {
	k := &models.IntegrationKey{IPAllowlist: []string{"203.0.113.0/24", "2001:db8::/32"}}
	cases := map[string]bool{
		"203.0.113.9": true, "203.0.114.1": false, "::ffff:203.0.113.9": true,
		"2001:db8:1::5": true, "2001:db9::1": false, "garbage": false, "": false,
	}
	for addr, want := range cases {
		if got := k.AllowsIP(addr); got != want {
			t.Errorf("%q: %v, want %v", addr, got, want)
		}
	}
	if !(&models.IntegrationKey{}).AllowsIP("198.51.100.1") {
		t.Fatal("an empty allowlist must allow every address")
	}
}
