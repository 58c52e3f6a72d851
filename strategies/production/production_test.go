package production

import (
	"testing"

	"optimize/strategies/settings"
)

// A CPU tier of 3000 blocks of 16 tokens of llama-3.1-8b (32 layers, 8 KV
// heads of 128, 2 bytes: 131072 bytes per token over the TP2 instance) is 3000·16·131072/2^30 =
// 5.859375 GiB, and the GiB read back give the 3000 blocks.
func TestCPUTierConvertsToGiBAndBack(t *testing.T) {
	c, err := settings.Standard()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := settings.Lookup("kv.cpu_blocks")
	if err := s.Set(&c, "3000"); err != nil {
		t.Fatal(err)
	}
	got := Carry(s, &c)
	if got.Production != "5.859375" || got.Fidelity != settings.Approximate {
		t.Fatalf("carried %+v", got)
	}
	back, ok := importValue(s, &c, got.Production)
	if !ok || back != "3000" {
		t.Fatalf("%s GiB read back as %q blocks, want 3000", got.Production, back)
	}
}
