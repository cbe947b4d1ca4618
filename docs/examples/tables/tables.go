// Command tables is the example of docs/concepts.md on streams, tables and
// global tables.
package main

//go:generate go tool streamgen generate

// WithProfile starts an enriched click from a click and the user's
// profile; profile is nil when the table has no row for the user (a left
// join).
func WithProfile(user string, page string, profile *Profile) *Click {
	c := &Click{Page: page}
	if profile != nil {
		c.User = &profile.Name
		c.Country = &profile.Country
	}
	return c
}

// CountryCode maps an enriched click to the key of the countries global
// table.
func CountryCode(user string, c *Click) string {
	if c.Country == nil {
		return ""
	}
	return *c.Country
}

// WithCountry replaces the country code with the country's name, when the
// global table knows it (name is nil when it does not: a left join).
func WithCountry(user string, c *Click, name *string) *Click {
	out := *c
	if name != nil {
		out.Country = name
	}
	return &out
}

// ByCountry re-keys a profile by its country.
func ByCountry(user string, p *Profile) (string, *Profile) {
	return p.Country, p
}
