// Command windows is the example of docs/concepts.md on windows: the same
// clicks counted in tumbling, hopping, sliding and session windows.
package main

//go:generate go tool streamgen generate
