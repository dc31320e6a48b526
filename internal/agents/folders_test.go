// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agents

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(home string, vars map[string]string) Env {
	return Env{Home: home, Getenv: func(k string) string { return vars[k] }}
}

func TestDataFolders(t *testing.T) {
	d := &Descriptor{
		Folders: []Folder{
			{Home: []string{".a"}},
			{Env: "A_DIR"},
			{Env: "XDG_DATA_HOME", Below: []string{"b"}, Home: []string{".local", "share", "b"}, Absolute: true},
		},
		Include: func(dir string) []string { return []string{filepath.Join(dir, "*.jsonl")} },
	}
	got, err := d.DataFolders(env("/h", nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"/h/.a", "/h/.local/share/b"}, got, "the defaults; a folder with only a variable is not read when it is unset")

	got, err = d.DataFolders(env("/h", map[string]string{"A_DIR": "~/moved", "XDG_DATA_HOME": "/x"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"/h/.a", "/h/moved", "/x/b"}, got, "a variable replaces its folder's default; ~ expands")

	got, err = d.DataFolders(env("/h", map[string]string{"XDG_DATA_HOME": "rel"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"/h/.a", "/h/.local/share/b"}, got, "a relative XDG_DATA_HOME is ignored")

	_, err = d.DataFolders(env("", nil))
	require.ErrorIs(t, err, ErrNoHome)
	got, err = d.DataFolders(env("", map[string]string{"A_DIR": "/abs"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"/abs"}, got, "a variable is enough without a home")

	assert.Equal(t, []string{"/h/.a", "/h/moved", "/h/.local/share/b", "/x/b"},
		d.KnownFolders(env("/h", map[string]string{"A_DIR": "/h/moved", "XDG_DATA_HOME": "/x"})),
		"every folder: the defaults and where the variables point")
	assert.Equal(t, []string{"A_DIR", "XDG_DATA_HOME"}, d.EnvVars())

	inc, err := d.DefaultInclude(env("/h", nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"/h/.a/*.jsonl", "/h/.local/share/b/*.jsonl"}, inc)
	assert.Equal(t, []string{"~/.a/*.jsonl", "$A_DIR/*.jsonl", "~/.local/share/b/*.jsonl", "$XDG_DATA_HOME/b/*.jsonl"}, d.DefaultLocations())
}

func TestExpandHome(t *testing.T) {
	assert.Equal(t, "/h", ExpandHome("~", "/h"))
	assert.Equal(t, "/h/x", ExpandHome("~/x", "/h"))
	assert.Equal(t, "~user/x", ExpandHome("~user/x", "/h"))
	assert.Equal(t, "~/x", ExpandHome("~/x", ""))
	assert.Equal(t, "/abs", ExpandHome("/abs", "/h"))
}

func TestRegisterRejectsIncompleteDescriptors(t *testing.T) {
	ok := Descriptor{
		Source: "test_ok", Service: "test-ok", Display: "Test",
		Folders:  []Folder{{Home: []string{".t"}}},
		Include:  func(dir string) []string { return []string{dir} },
		Reader:   Reader{Kind: OpenCodeStore, Database: "t.db"},
		Fixtures: Fixtures{Dir: "test_ok"},
	}
	for name, edit := range map[string]func(d *Descriptor){
		"no source":         func(d *Descriptor) { d.Source = "" },
		"no folders":        func(d *Descriptor) { d.Folders = nil },
		"no include":        func(d *Descriptor) { d.Include = nil },
		"no reader":         func(d *Descriptor) { d.Reader = Reader{} },
		"jsonl no parser":   func(d *Descriptor) { d.Reader = Reader{Kind: AppendedJSONL} },
		"rewritten no map":  func(d *Descriptor) { d.Reader = Reader{Kind: RewrittenFiles} },
		"store no database": func(d *Descriptor) { d.Reader = Reader{Kind: OpenCodeStore} },
		"no fixtures dir":   func(d *Descriptor) { d.Fixtures.Dir = "" },
	} {
		d := ok
		edit(&d)
		assert.Panics(t, func() { Register(d) }, name)
	}
	Register(ok)
	assert.Same(t, Lookup("test_ok"), All()[len(All())-1], "registered once, found by source")
	assert.Equal(t, "test-ok", Lookup("test_ok").Source.ServiceName(), "its service name is known to the event model")
	dup := ok
	dup.Service = "other"
	assert.Panics(t, func() { Register(dup) }, "a source registered twice")
}

func TestDocLocations(t *testing.T) {
	d := &Descriptor{
		Folders: []Folder{{Home: []string{".a"}}, {Env: "A_DIR"}},
		Include: func(dir string) []string { return []string{filepath.Join(dir, "p", "*.jsonl")} },
	}
	assert.Equal(t, "`~/.a/p/*.jsonl`, `$A_DIR/p/*.jsonl`", d.DocLocations())
	d = &Descriptor{
		Folders: []Folder{{Env: "B_HOME", Home: []string{".b"}}},
		Include: func(dir string) []string {
			return []string{filepath.Join(dir, "x", "*.json"), filepath.Join(dir, "y.json")}
		},
	}
	assert.Equal(t, "`$B_HOME` (`~/.b`): `x/*.json`, `y.json`", d.DocLocations())
	d = &Descriptor{
		Folders: []Folder{{Env: "XDG_DATA_HOME", Below: []string{"c"}, Home: []string{".local", "share", "c"}}},
		Include: func(dir string) []string { return []string{dir} },
	}
	assert.Equal(t, "`$XDG_DATA_HOME/c` (`~/.local/share/c`)", d.DocLocations())
}
