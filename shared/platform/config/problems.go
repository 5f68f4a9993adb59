package config

import (
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a configuration file.
type Problem struct {
	File  string
	Line  int    // 1-based; 0 when the problem concerns the file as a whole
	Field string // field path such as agents[0].tools.RocketChat.maxUploadMb
	What  string // what is wrong
	Fix   string // what to do about it
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.What)
	if p.Fix != "" {
		b.WriteString("; ")
		b.WriteString(p.Fix)
	}
	return b.String()
}

// Error is returned by Load and Parse for a configuration that cannot be
// used. It lists every problem found, one per line, each as
// "<file>:<line>: <field>: <what is wrong>; <the fix>".
type Error struct {
	File     string
	Problems []Problem
}

func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "config: %s has %d problems:", e.File, len(e.Problems))
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  %s: … and %d more", e.File, len(e.Problems)-maxListed)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// maxListed caps the problems spelled out in Error(); all stay in Problems.
const maxListed = 50

// problems collects Problems for one file; lines maps field paths to the
// line they were written on.
type problems struct {
	file  string
	lines map[string]int
	list  []Problem

	shapeFields map[string]bool // fields whose value could not be decoded
	suggested   map[string]bool // fields an unknown key probably meant
}

func newProblems(file string) *problems {
	return &problems{file: file, lines: map[string]int{}, shapeFields: map[string]bool{}, suggested: map[string]bool{}}
}

func (ps *problems) add(line int, field, what, fix string) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Field: field, What: what, Fix: fix})
}

// at reports a problem on a field, at the line of the field or, when the
// field was not written, of its nearest written parent.
// A field whose value (or a parent's) could not be decoded gets no second
// problem, and neither does a missing field that a misspelt key already
// explains ("nmae: unknown key; did you mean name?").
func (ps *problems) at(field, what, fix string) {
	if ps.suggested[field] {
		return
	}
	for f := field; f != ""; f = parentPath(f) {
		if ps.shapeFields[f] {
			return
		}
	}
	ps.add(ps.lineOf(field), field, what, fix)
}

func (ps *problems) lineOf(field string) int {
	for p := field; p != ""; p = parentPath(p) {
		if l, ok := ps.lines[p]; ok {
			return l
		}
	}
	return 1
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := slices.Clone(ps.list)
	slices.SortStableFunc(list, func(a, b Problem) int { return a.Line - b.Line })
	return &Error{File: ps.file, Problems: list}
}
