package textdiff

import "testing"

func TestUnified(t *testing.T) {
	for _, c := range []struct {
		name, a, b string
		want       string
	}{
		{"equal", "x\ny\n", "x\ny\n", ""},
		{"change", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n", `--- a
+++ b
@@ -2,8 +2,9 @@
 2
 3
 4
-5
+five
 6
 7
 8
 9
+10
`},
		{"separate hunks", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n", "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\n", `--- a
+++ b
@@ -1,4 +1,4 @@
-a
+A
 b
 c
 d
@@ -9,4 +9,4 @@
 i
 j
 k
-l
+L
`},
		{"from empty", "", "x\ny\n", "--- a\n+++ b\n@@ -1,0 +1,2 @@\n+x\n+y\n"},
	} {
		if got := Unified("a", "b", c.a, c.b); got != c.want {
			t.Errorf("%s: got:\n%q\nwant:\n%q", c.name, got, c.want)
		}
	}
}
