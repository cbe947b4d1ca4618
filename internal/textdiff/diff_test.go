package textdiff

import "testing"

func TestUnifiedEqual(t *testing.T) {
	if d := Unified("a", "b", "x\ny\n", "x\ny\n"); d != "" {
		t.Fatalf("equal inputs gave a diff:\n%s", d)
	}
}

func TestUnifiedChange(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"
	want := `--- a
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
`
	if got := Unified("a", "b", a, b); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestUnifiedSeparateHunks(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
	b := "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\n"
	want := `--- x
+++ y
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
`
	if got := Unified("x", "y", a, b); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestUnifiedFromEmpty(t *testing.T) {
	want := "--- a\n+++ b\n@@ -1,0 +1,2 @@\n+x\n+y\n"
	if got := Unified("a", "b", "", "x\ny\n"); got != want {
		t.Fatalf("got:\n%q\nwant:\n%q", got, want)
	}
}
