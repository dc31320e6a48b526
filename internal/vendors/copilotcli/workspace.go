// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"strconv"
	"strings"
)

// Workspace is what workspace.yaml beside a session's events.jsonl says
// about the session's workspace.
type Workspace struct {
	ID         string
	Cwd        string
	GitRoot    string
	Repository string
	Branch     string
	Summary    string
}

// ParseWorkspace reads workspace.yaml. The CLI writes flat `key: value`
// lines (block scalars such as a multi-line summary are skipped, their
// first line kept); only the keys above are read, so no YAML library is
// needed in this pure package. Anything it cannot read is left empty.
func ParseWorkspace(data []byte) Workspace {
	var w Workspace
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue // blank, a block scalar's continuation, a comment
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = scalar(strings.TrimSpace(v))
		switch strings.TrimSpace(k) {
		case "id":
			w.ID = v
		case "cwd":
			w.Cwd = v
		case "git_root":
			w.GitRoot = v
		case "repository":
			w.Repository = v
		case "branch":
			w.Branch = v
		case "summary":
			w.Summary = v
		}
	}
	return w
}

// scalar unquotes a one-line YAML scalar; a block indicator (|, >) yields "".
func scalar(v string) string {
	switch {
	case v == "":
		return ""
	case v[0] == '|' || v[0] == '>':
		return ""
	case v[0] == '"':
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
	case v[0] == '\'' && len(v) >= 2 && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}
