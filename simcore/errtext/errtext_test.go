package errtext

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":           "plain",
		"a\nb\r\n\n  c  ": "a; b; c",
		"yaml: unmarshal errors:\n  line 3: field x not found\n  line 4: bad": "yaml: unmarshal errors: line 3: field x not found; line 4: bad",
		"\n\n": "",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorsReadAsOneLine(t *testing.T) {
	if got := New("f.yaml", "a.b", "line %d:\nbad", 3).Error(); got != "f.yaml: a.b: line 3: bad" {
		t.Errorf("field error %q", got)
	}
	if got := BadSetting("num_instances", "must be ≥ 1, got %d", 0).Error(); got != "num_instances: must be ≥ 1, got 0" {
		t.Errorf("setting error %q", got)
	}
}
