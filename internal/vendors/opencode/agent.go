// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// Source is OpenCode's event source.
const Source agentevent.Source = "opencode"

func init() {
	agents.Register(agents.Descriptor{
		Source:  Source,
		Service: "opencode",
		Display: "OpenCode",
		Color:   "orange",
		// $XDG_DATA_HOME/opencode when XDG_DATA_HOME is set to an absolute
		// path (as OpenCode's xdg-basedir does), else
		// ~/.local/share/opencode.
		Folders: []agents.Folder{{
			Env: "XDG_DATA_HOME", Below: []string{"opencode"},
			Home: []string{".local", "share", "opencode"}, Absolute: true,
		}},
		// The include patterns match data directories, not files.
		Include:  func(dir string) []string { return []string{dir} },
		Optional: true,
		Reader:   agents.Reader{Kind: agents.OpenCodeStore, Database: "opencode.db"},
		Ccusage: &agents.Ccusage{
			Command: "opencode", Env: []string{"OPENCODE_DATA_DIR"}, DataDirEnv: "OPENCODE_DATA_DIR",
			ReasoningOutsideOutput: true,
		},
		Fixtures: agents.Fixtures{
			Dir:   "opencode",
			Stage: stage,
			// The storage tree (storage/{project,session,message,part}/…),
			// one per fixture folder.
			Keep: func(rel string) bool { return strings.Contains(rel, "/storage/") && strings.HasSuffix(rel, ".json") },
			Place: func(_ int, rel string, _ []byte) string {
				_, rest, _ := strings.Cut(rel, "/storage/")
				return filepath.Join(".local", "share", "opencode", "storage", rest)
			},
			Share: 0.05,
		},
		Doc: agents.Doc{Versions: "1.1.12 – 1.1.51 (JSON tree); SQLite 1.4 – 1.16"},
	})
}

// stage lays a corpus out as ~/.local/share/opencode/storage (every JSON
// tree merged), and each SQLite database (opencode.db and its -wal, -shm)
// in a data directory of its own, since one directory holds one database
// and a database hides the JSON tree beside it.
func stage(s *agents.Staging) error {
	for _, p := range s.Glob("*/storage") {
		if err := s.Tree(p, filepath.Join(".local", "share", "opencode", "storage")); err != nil {
			return err
		}
	}
	for _, db := range s.Glob("*/opencode.db") {
		dir := filepath.Join(".local", "share", "opencode-fixtures", fmt.Sprintf("%d-%s", s.Root, filepath.Base(filepath.Dir(db))))
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if _, err := os.Stat(db + suffix); err != nil {
				continue
			}
			if err := s.Copy(db+suffix, filepath.Join(dir, "opencode.db"+suffix)); err != nil {
				return err
			}
		}
		s.DataDir(dir)
	}
	if m := s.Glob("*.json"); len(m) > 0 {
		s.Note(fmt.Sprintf("opencode: %d API dump file(s) of %s left out: not a format OpenCode keeps in its data directory", len(m), s.Dir))
	}
	return nil
}
