package sgreplay

import (
	"errors"
	"strings"
	"testing"
)

// EachLine numbers lines as an editor does, skips blank ones, passes them
// trimmed, reads lines past bufio's 64 KiB default and stops at fn's error.
func TestEachLine(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	in := "  a \n\n\t\nb\n" + long + "\nc\n"
	var got []string
	var nums []int
	stop := errors.New("stop")
	err := EachLine(strings.NewReader(in), func(n int, text []byte) error {
		nums = append(nums, n)
		got = append(got, string(text))
		if string(text) == long {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want fn's error", err)
	}
	if want := []int{1, 4, 5}; len(nums) != 3 || nums[0] != want[0] || nums[1] != want[1] || nums[2] != want[2] {
		t.Errorf("line numbers %v, want %v", nums, want)
	}
	if got[0] != "a" || got[1] != "b" {
		t.Errorf("lines %q, want trimmed a, b", got[:2])
	}
	if err := EachLine(strings.NewReader(strings.Repeat("y", MaxLineBytes+1)), func(int, []byte) error { return nil }); err == nil || !strings.HasPrefix(err.Error(), "reading input: ") {
		t.Errorf("over-long line: err = %v, want a reading input error", err)
	}
}
