package main

// Pair is "view+click", as the twin's joiner (view, click) -> view + "+" + click.
func Pair(_ string, view string, click string) string { return view + "+" + click }
