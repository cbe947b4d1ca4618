// Command adclicks is the application of docs/tutorial.md: ad impressions
// joined with the clicks on them within one minute.
package main

//go:generate go tool streamgen generate
