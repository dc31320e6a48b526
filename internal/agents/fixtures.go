// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agents

import (
	"path/filepath"
	"sort"
)

// Fixtures is how an agent's files of a fixture corpus (the layout of
// ../shared/fixtures: one folder per agent) are laid out in a test home,
// where the agent keeps them: once as they are (Stage: the fidelity check,
// the end-to-end tests), or copied many times with their ids made unique
// (Keep, Place: the generated histories of the benchmark and the fault
// tests).
type Fixtures struct {
	// Dir is the agent's folder in a fixture corpus.
	Dir string
	// Stage copies the agent's fixtures into a home as they are.
	Stage func(s *Staging) error
	// Keep says which files of the agent's corpus folder (rel, slash
	// separated) a generated history copies.
	Keep func(rel string) bool
	// Place is the path below the home directory of copy r of the fixture
	// file rel (rel with its ids already made unique).
	Place func(r int, rel string, data []byte) string
	// JSONLInclude is the pattern, below the home directory, of the agent's
	// line-delimited files in a generated history ("" for an agent whose
	// files are whole JSON documents or databases).
	JSONLInclude string
	// SessionID, when set, reads a session id of a fixture file that is not
	// a UUID or a prefixed vendor id, so that copies make it unique too.
	SessionID func(data []byte) string
	// Share is the agent's share of the bytes of a generated history (the
	// mix users report: mostly Claude Code and Codex).
	Share float64
}

// Staging is one agent's corpus folder being staged into a home.
type Staging struct {
	// Dir is the agent's folder in the corpus root; Home the home staged
	// into; Root the index of the corpus root among those staged (to keep
	// the names of several roots apart).
	Dir  string
	Home string
	Root int
	// Copy copies the file src to dst (below Home), refusing to put another
	// file where one was staged already; Tree copies a folder.
	Copy func(src, dst string) error
	Tree func(src, dst string) error
	// Note says what was left out, and why.
	Note func(msg string)
	// DataDir adds a data directory (below Home) to those the agent is read
	// from besides its default ones (a corpus with several OpenCode
	// databases: one data directory holds one).
	DataDir func(dir string)
}

// Glob returns the corpus files and folders that match pattern below Dir,
// sorted.
func (s *Staging) Glob(pattern string) []string {
	m, _ := filepath.Glob(filepath.Join(s.Dir, pattern))
	sort.Strings(m)
	return m
}
