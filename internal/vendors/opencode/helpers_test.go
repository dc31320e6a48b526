// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var repoRoot = vendortest.RepoRoot

func readJSONFiles(t testing.TB, dir string) (names []string, data [][]byte) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		names = append(names, e.Name())
		data = append(data, b)
	}
	return names, data
}

// mapTree maps a whole storage tree (<dir>/storage) the way the receiver's
// reader does once every message is final: sessions by creation time,
// messages and parts by id, one Sequence counter per session (a thread). LogFile
// is the message file's path relative to dir.
func mapTree(t testing.TB, dir string) []agentevent.Event {
	storage := filepath.Join(dir, "storage")
	projects := map[string]Project{}
	_, pdata := readJSONFiles(t, filepath.Join(storage, "project"))
	for _, b := range pdata {
		p, err := DecodeProject(b)
		require.NoError(t, err)
		projects[p.ID] = p
	}
	sessions := map[string]Session{}
	var order []Session
	projDirs, err := os.ReadDir(filepath.Join(storage, "session"))
	require.NoError(t, err)
	for _, pd := range projDirs {
		_, sdata := readJSONFiles(t, filepath.Join(storage, "session", pd.Name()))
		for _, b := range sdata {
			s, err := DecodeSession(b)
			require.NoError(t, err)
			sessions[s.ID] = s
			order = append(order, s)
		}
	}
	slices.SortFunc(order, func(a, b Session) int {
		if a.Time.Created != b.Time.Created {
			return int(a.Time.Created - b.Time.Created)
		}
		return strings.Compare(a.ID, b.ID)
	})
	lookupS := func(id string) (Session, bool) { s, ok := sessions[id]; return s, ok }
	lookupP := func(id string) (Project, bool) { p, ok := projects[id]; return p, ok }
	seq := map[string]int64{}
	spawnedBy := map[string]string{}
	var events []agentevent.Event
	for _, s := range order {
		c := ResolveContext(s, lookupS, lookupP)
		if s.ParentID != "" {
			c.ParentToolCallID = spawnedBy[s.ID]
		}
		names, mdata := readJSONFiles(t, filepath.Join(storage, "message", s.ID))
		for i, b := range mdata {
			m, err := DecodeMessage(b)
			require.NoError(t, err)
			_, partData := readJSONFiles(t, filepath.Join(storage, "part", m.ID))
			var parts []Part
			for _, pb := range partData {
				p, err := DecodePart(pb)
				require.NoError(t, err)
				parts = append(parts, p)
			}
			for child, call := range SpawnedSessions(parts) {
				spawnedBy[child] = call
			}
			require.True(t, Finished(m, parts, i < len(mdata)-1), "message %s is not final", m.ID)
			mc := c
			mc.LogFile = filepath.ToSlash(filepath.Join("storage", "message", s.ID, names[i]))
			mc.Sequence = seq[s.ID] + 1
			evs := MapMessage(mc, m, parts)
			seq[s.ID] += int64(len(evs))
			events = append(events, evs...)
		}
	}
	return events
}

// mapAPI maps a server API dump ([{info, parts}] of one session).
func mapAPI(t testing.TB, path, logFile string) []agentevent.Event {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	msgs, err := DecodeAPIMessages(b)
	require.NoError(t, err)
	var events []agentevent.Event
	seq := int64(1)
	for _, m := range msgs {
		c := Context{Session: Session{ID: m.Info.SessionID}, LogFile: logFile, Sequence: seq}
		evs := MapMessage(c, m.Info, m.Parts)
		seq += int64(len(evs))
		events = append(events, evs...)
	}
	return events
}
