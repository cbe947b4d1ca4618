package main

import "strings"

// Words splits a line into lower-case words, as WordCountExample's
// flatMapValues(value -> Arrays.asList(pattern.split(value.toLowerCase()))).
func Words(_ string, line string) []string { return strings.Fields(strings.ToLower(line)) }

// Word groups by the word itself.
func Word(_ string, word string) string { return word }
