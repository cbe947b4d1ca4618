package version

import "testing"

// The runtime must support the code the generator of the same module emits;
// otherwise every freshly generated package would fail to compile.
func TestGenVersionWithinRuntimeRange(t *testing.T) {
	if GenVersion < MinVersion || GenVersion > MaxVersion {
		t.Fatalf("GenVersion %d outside runtime range [%d, %d]", GenVersion, MinVersion, MaxVersion)
	}
	if MinVersion < 1 || MinVersion > MaxVersion {
		t.Fatalf("bad runtime range [%d, %d]", MinVersion, MaxVersion)
	}
}
