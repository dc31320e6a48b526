// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentotel/agentotel/internal/vendors/amp"
	"github.com/agentotel/agentotel/internal/vendors/copilotcli"
	"github.com/agentotel/agentotel/internal/vendors/gemini"
)

// BenchmarkDecodeWholeFiles measures the decoders of the agents whose files are read whole again
// at every change (Copilot CLI history, Amp threads, Gemini CLI chats, .json and .jsonl), on the
// files of every fixture root.
func BenchmarkDecodeWholeFiles(b *testing.B) {
	roots := fixtureRoots(b)
	for _, c := range []struct {
		name, glob string
		decode     func([]byte) error
	}{
		{"copilot_history", "copilot_cli/*/history-session-state/*.json", func(d []byte) error { _, err := copilotcli.DecodeHistory(d); return err }},
		{"amp_thread", "amp/threads/*.json", func(d []byte) error { _, err := amp.DecodeThread(d); return err }},
		{"gemini_chat", "gemini/chat_*.json", func(d []byte) error { _, err := gemini.DecodeChat(d); return err }},
		{"gemini_chat_jsonl", "gemini/*/*.jsonl", func(d []byte) error {
			if _, errs := gemini.DecodeChatJSONL(d); len(errs) > 0 {
				return errs[0]
			}
			return nil
		}},
	} {
		var paths []string
		for _, root := range roots {
			p, _ := filepath.Glob(filepath.Join(root, c.glob))
			paths = append(paths, p...)
		}
		if len(paths) == 0 {
			continue
		}
		var files [][]byte
		var size int64
		for _, p := range paths {
			d, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, d)
			size += int64(len(d))
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for range b.N {
				for _, d := range files {
					if err := c.decode(d); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
