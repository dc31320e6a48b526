// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agents

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/agentotel/agentotel/internal/agentevent"
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

// Staged is what StageCorpus laid out.
type Staged struct {
	// Agents are the agents with files in the corpus root.
	Agents map[agentevent.Source]bool
	// DataDirs are each agent's data directories besides its default ones
	// (Staging.DataDir).
	DataDirs map[agentevent.Source][]string
	// Notes say what was left out, and why.
	Notes []string
}

// StageCorpus lays every registered agent's folder of a fixture corpus root
// out in home, where the agent keeps its files (Fixtures.Stage); index
// tells roots staged into one home apart. Staging refuses to put a file
// where another file was staged already.
func StageCorpus(root string, index int, home string, st *Staged) error {
	if st.Agents == nil {
		st.Agents = map[agentevent.Source]bool{}
	}
	if st.DataDirs == nil {
		st.DataDirs = map[agentevent.Source][]string{}
	}
	for _, d := range All() {
		if d.Fixtures.Stage == nil {
			continue
		}
		src := d.Source
		cp := func(from, to string) error {
			st.Agents[src] = true
			return copyFile(from, filepath.Join(home, to))
		}
		err := d.Fixtures.Stage(&Staging{
			Dir: filepath.Join(root, d.Fixtures.Dir), Home: home, Root: index,
			Copy: cp,
			Tree: func(from, to string) error {
				return filepath.WalkDir(from, func(p string, e os.DirEntry, err error) error {
					if err != nil || e.IsDir() {
						return err
					}
					rel, _ := filepath.Rel(from, p)
					return cp(p, filepath.Join(to, rel))
				})
			},
			Note:    func(msg string) { st.Notes = append(st.Notes, msg) },
			DataDir: func(dir string) { st.DataDirs[src] = append(st.DataDirs[src], filepath.Join(home, dir)) },
		})
		if err != nil {
			return fmt.Errorf("%s: %w", d.Source, err)
		}
	}
	return nil
}

// Include is the include patterns of every staged agent's files in home:
// its default locations and its extra data directories.
func (st *Staged) Include(d *Descriptor, home string) []string {
	include, _ := d.DefaultInclude(Env{Home: home, Getenv: func(string) string { return "" }})
	for _, dir := range st.DataDirs[d.Source] {
		include = append(include, d.Include(dir)...)
	}
	return include
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if old, errOld := os.ReadFile(dst); errOld == nil && !bytes.Equal(old, b) {
		return fmt.Errorf("%s: another fixture is already staged at %s", src, dst)
	}
	if errDir := os.MkdirAll(filepath.Dir(dst), 0o755); errDir != nil {
		return errDir
	}
	if errWrite := os.WriteFile(dst, b, 0o600); errWrite != nil { //nolint:gosec // G703: staging a fixture corpus into the scratch home is the job
		return errWrite
	}
	// The copy is as old as the fixture: a finished history, not files an
	// agent may still be writing.
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}
