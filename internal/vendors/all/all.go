// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package all registers every agent agentotel reads: importing it fills
// the agents registry. Adding an agent is its vendor package and one line
// here.
package all

import (
	// Each import registers its agent (its package's init).
	_ "github.com/agentotel/agentotel/internal/vendors/amp"
	_ "github.com/agentotel/agentotel/internal/vendors/claudecode"
	_ "github.com/agentotel/agentotel/internal/vendors/codex"
	_ "github.com/agentotel/agentotel/internal/vendors/copilotcli"
	_ "github.com/agentotel/agentotel/internal/vendors/gemini"
	_ "github.com/agentotel/agentotel/internal/vendors/kilo"
	_ "github.com/agentotel/agentotel/internal/vendors/openclaw"
	_ "github.com/agentotel/agentotel/internal/vendors/opencode"
	_ "github.com/agentotel/agentotel/internal/vendors/pi"
)
