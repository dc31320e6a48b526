// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agents

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Folder is one place an agent keeps its data: the folder an environment
// variable names when it is set, else a default below the home directory.
type Folder struct {
	// Env is the variable that relocates the folder ("" when none).
	Env string
	// Below is the path below the variable's folder (XDG_DATA_HOME names
	// the parent of OpenCode's folder: "opencode" below it).
	Below []string
	// Home is the default, below the home directory (nil: the folder is
	// only read where Env names it).
	Home []string
	// Absolute: the variable is honored only when it names an absolute
	// path (the XDG base directory rule).
	Absolute bool
}

// Env is the slice of the process environment an agent's locations depend
// on.
type Env struct {
	Home   string // "" when unknown
	Getenv func(string) string
}

// ProcessEnv is the environment of the running process.
func ProcessEnv() Env {
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return Env{Home: home, Getenv: os.Getenv}
}

// ErrNoHome says an agent's default location cannot be known.
var ErrNoHome = errors.New("the home directory is unknown ($HOME is not set)")

// ExpandHome replaces a leading "~" (alone or followed by a separator) with
// home. Paths are otherwise used as given (~user is not supported).
func ExpandHome(p, home string) string {
	if home == "" || !strings.HasPrefix(p, "~") {
		return p
	}
	rest := p[1:]
	if rest == "" {
		return home
	}
	if rest[0] == '/' || rest[0] == filepath.Separator {
		return filepath.Join(home, rest[1:])
	}
	return p
}

// fromEnv is the folder the variable names, "" when it is unset (or not
// absolute where it must be).
func (f Folder) fromEnv(env Env) string {
	if f.Env == "" || env.Getenv == nil {
		return ""
	}
	d := env.Getenv(f.Env)
	if d == "" {
		return ""
	}
	d = ExpandHome(d, env.Home)
	if f.Absolute && !filepath.IsAbs(d) {
		return ""
	}
	return filepath.Clean(filepath.Join(append([]string{d}, f.Below...)...))
}

// fromHome is the default folder, "" when there is none or the home
// directory is unknown.
func (f Folder) fromHome(home string) string {
	if f.Home == nil || home == "" {
		return ""
	}
	return filepath.Join(append([]string{home}, f.Home...)...)
}

// DataFolders are the folders the agent's data is read from: each Folder
// where its variable names it, else its default. ErrNoHome when none can
// be known.
func (d *Descriptor) DataFolders(env Env) ([]string, error) {
	var out []string
	for _, f := range d.Folders {
		p := f.fromEnv(env)
		if p == "" {
			p = f.fromHome(env.Home)
		}
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, ErrNoHome
	}
	return out, nil
}

// KnownFolders are every folder the agent may keep data in: each Folder's
// default and, where its variable is set, the folder it names.
func (d *Descriptor) KnownFolders(env Env) []string {
	var out []string
	for _, f := range d.Folders {
		for _, p := range []string{f.fromHome(env.Home), f.fromEnv(env)} {
			if p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// DefaultInclude are the include patterns of the agent's files in its
// data folders.
func (d *Descriptor) DefaultInclude(env Env) ([]string, error) {
	dirs, err := d.DataFolders(env)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, dir := range dirs {
		for _, p := range d.Include(dir) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// EnvVars are the variables that relocate the agent's folders.
func (d *Descriptor) EnvVars() []string {
	var out []string
	for _, f := range d.Folders {
		if f.Env != "" && !slices.Contains(out, f.Env) {
			out = append(out, f.Env)
		}
	}
	return out
}

// DefaultLocations describes where the agent's files are read by default,
// for people: the include patterns below "~" and each variable's folder
// ("$CODEX_HOME/sessions/**/rollout-*.jsonl").
func (d *Descriptor) DefaultLocations() []string {
	var out []string
	add := func(dir string) {
		for _, p := range d.Include(dir) {
			p = filepath.ToSlash(p)
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	for _, f := range d.Folders {
		if f.Home != nil {
			add(filepath.Join(append([]string{"~"}, f.Home...)...))
		}
		if f.Env != "" {
			add(filepath.Join(append([]string{"$" + f.Env}, f.Below...)...))
		}
	}
	return out
}

// DocLocations says in Markdown where the agent's files are read by
// default: each folder (its variable, and its default below "~") with the
// include patterns below it.
func (d *Descriptor) DocLocations() string {
	const root = "\x00"
	var rel []string
	for _, p := range d.Include(root) {
		r := strings.TrimPrefix(filepath.ToSlash(strings.TrimPrefix(p, root)), "/")
		if r != "" {
			rel = append(rel, r)
		}
	}
	var parts []string
	for _, f := range d.Folders {
		var env, home string
		if f.Env != "" {
			env = "$" + path.Join(append([]string{f.Env}, f.Below...)...)
		}
		if f.Home != nil {
			home = "~/" + path.Join(f.Home...)
		}
		var base string
		switch {
		case env != "" && home != "":
			base = "`" + env + "` (`" + home + "`)"
		case env != "":
			base = "`" + env + "`"
		default:
			base = "`" + home + "`"
		}
		switch {
		case len(rel) == 0:
			parts = append(parts, base)
		case len(rel) == 1 && (env == "" || home == ""):
			parts = append(parts, "`"+path.Join(strings.Trim(base, "`"), rel[0])+"`")
		default:
			parts = append(parts, base+": `"+strings.Join(rel, "`, `")+"`")
		}
	}
	return strings.Join(parts, ", ")
}

// LocationVars are the variables that relocate a registered agent's
// folders, sorted: the agents' own (Folder.Env) and ccusage's spellings of
// them (Ccusage.Env).
func LocationVars() []string {
	var vars []string
	for _, d := range All() {
		vars = append(vars, d.EnvVars()...)
		if d.Ccusage != nil {
			vars = append(vars, d.Ccusage.Env...)
		}
	}
	slices.Sort(vars)
	return slices.Compact(vars)
}
