package models

import (
	"slices"
	"testing"
)

func TestTextArrayRoundTripsWhatNeedsQuoting(t *testing.T) {
	for _, in := range [][]string{{}, {"a"}, {"vip", "two words", `quo"te`, `back\slash`, "com,ma", "{brace}", "NULL", ""}} {
		v, err := TextArray(in).Value()
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var out TextArray
		if err := out.Scan(v); err != nil {
			t.Fatalf("%q as %v: %v", in, v, err)
		}
		if !slices.Equal(out, in) || out == nil {
			t.Errorf("%q came back as %q", in, out)
		}
	}
}

func TestTextArrayNilIsTheEmptyArrayAndNullScansAsNil(t *testing.T) {
	if v, err := TextArray(nil).Value(); err != nil || v != "{}" {
		t.Errorf("nil wrote %v, %v; want {}", v, err)
	}
	out := TextArray{"x"}
	if err := out.Scan(nil); err != nil || out != nil {
		t.Errorf("NULL scanned as %q, %v", out, err)
	}
	if err := out.Scan([]byte("{10.0.0.0/8,::1/128}")); err != nil || !slices.Equal(out, TextArray{"10.0.0.0/8", "::1/128"}) {
		t.Errorf("cidr[] text scanned as %q, %v", out, err)
	}
	if err := out.Scan(42); err == nil {
		t.Error("an int scanned without error")
	}
}
