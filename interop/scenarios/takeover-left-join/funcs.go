package main

// Pair is "view+click", "view+null" for a view no click joined, as the twin's joiner
// (view, click) -> view + "+" + click.
func Pair(_ string, view string, click *string) string {
	if click == nil {
		return view + "+null"
	}
	return view + "+" + *click
}
