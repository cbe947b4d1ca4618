// Command windows is example (d): clicks per page counted in tumbling,
// hopping, sliding and session windows, and once more with emit-on-close
// so each tumbling window is written exactly once, when it closes.
package main

//go:generate go tool streamgen generate
