// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package kilo registers Kilo CLI, an OpenCode fork, with the agents
// registry. Kilo keeps its sessions in OpenCode's layout: a SQLite database,
// kilo.db, with OpenCode's session, message and part tables (the same JSON
// objects in their data columns) in its data directory. They are read by
// the receiver's OpenCode source and mapped by internal/vendors/opencode
// with Kilo's source; this package holds only what differs: names,
// locations and fixtures. README.md has the facts behind them.
package kilo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// Source is the source of Kilo CLI's events and the key of its block in
// agent_log's configuration.
const Source agentevent.Source = "kilo"

// Database is the file name of Kilo's database in its data directory (the
// one its release channels write; see README.md for the others).
const Database = "kilo.db"

// Fixtures is Kilo's folder in a fixture corpus.
const Fixtures = "kilo"

// dataDir is Kilo's data directory below the home directory, and below
// $XDG_DATA_HOME the name of the folder in it.
var dataDir = []string{".local", "share", "kilo"}

func init() {
	agents.Register(Descriptor())
}

// Descriptor is Kilo CLI's entry in the agents registry.
func Descriptor() agents.Descriptor {
	return agents.Descriptor{
		Source:  Source,
		Service: "kilo",
		Display: "Kilo CLI",
		Color:   "yellow",
		// Kilo's data directory is xdg-basedir's data directory plus
		// "kilo", as OpenCode's is plus "opencode". A relative
		// XDG_DATA_HOME would be taken from Kilo's working directory,
		// which the collector cannot know: only an absolute one counts.
		Folders: []agents.Folder{{
			Env:      "XDG_DATA_HOME",
			Below:    dataDir[len(dataDir)-1:],
			Home:     dataDir,
			Absolute: true,
		}},
		// The source's patterns match data directories, not files.
		Include:  func(folder string) []string { return []string{folder} },
		Optional: true,
		Reader:   agents.Reader{Kind: agents.OpenCodeStore, Database: Database},
		Ccusage: &agents.Ccusage{
			Command: "kilo",
			// ccusage reads $KILO_DATA_DIR/kilo.db (comma-separated
			// directories; the default is then not read), else
			// ~/.local/share/kilo/kilo.db, and no other variable.
			Env:        []string{"KILO_DATA_DIR"},
			DataDirEnv: "KILO_DATA_DIR",
			// Its outputTokens are the message's tokens.output, which
			// leaves reasoning out, as for OpenCode.
			ReasoningOutsideOutput: true,
		},
		Fixtures: agents.Fixtures{
			Dir:   Fixtures,
			Stage: stage,
			// A generated history makes ids unique by rewriting a
			// fixture's bytes, which a SQLite database does not survive:
			// Kilo's databases are staged as they are only.
		},
		Doc: agents.Doc{
			Versions: "7.x (SQLite `kilo.db` in OpenCode's layout); constructed databases only",
		},
	}
}

// stage lays out each database of the corpus (<case>/kilo.db with its -wal
// and -shm) in a data directory of the home: the first in Kilo's default
// one, each other in a directory of its own, added with DataDir, since one
// data directory holds one database. Paths are below the home.
func stage(s *agents.Staging) error {
	def := filepath.Join(dataDir...)
	for _, db := range s.Glob(filepath.Join("*", Database)) {
		dir := def
		if _, err := os.Stat(filepath.Join(s.Home, def, Database)); err == nil {
			dir = filepath.Join(".local", "share", "kilo-fixtures",
				fmt.Sprintf("%d-%s", s.Root, filepath.Base(filepath.Dir(db))))
			s.DataDir(dir)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if _, err := os.Stat(db + suffix); err != nil {
				continue // no -wal or -shm beside a checkpointed database
			}
			if err := s.Copy(db+suffix, filepath.Join(dir, Database+suffix)); err != nil {
				return err
			}
		}
	}
	return nil
}
