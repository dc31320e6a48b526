// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

var _ confmap.Validator = (*Config)(nil)

// minFingerprintSize is the lower bound of fingerprint_size.
const minFingerprintSize = 16

// Validate reports every invalid setting at once, each by its name.
func (cfg *Config) Validate() error {
	var errs []error
	if err := cfg.StartAt.validate(); err != nil {
		errs = append(errs, err)
	}
	if cfg.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("`poll_interval` must be positive, got %s", cfg.PollInterval))
	}
	if cfg.MaxLogSize <= 0 {
		errs = append(errs, fmt.Errorf("`max_log_size` must be positive, got %d", cfg.MaxLogSize))
	}
	if cfg.MaxConcurrentFiles < 1 {
		errs = append(errs, fmt.Errorf("`max_concurrent_files` must be at least 1, got %d", cfg.MaxConcurrentFiles))
	}
	if cfg.FingerprintSize < minFingerprintSize {
		errs = append(errs, fmt.Errorf("`fingerprint_size` must be at least %d bytes, got %d", minFingerprintSize, cfg.FingerprintSize))
	}
	if err := cfg.RetryOnFailure.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("`retry_on_failure`: %w", err))
	}
	if cfg.MaxTrackedSessions < 1 {
		errs = append(errs, fmt.Errorf("`max_tracked_sessions` must be at least 1, got %d", cfg.MaxTrackedSessions))
	}
	if cfg.ForgetAfter < 0 {
		errs = append(errs, fmt.Errorf("`forget_after` must not be negative, got %s", cfg.ForgetAfter))
	}
	enabled := 0
	var keys []string
	for _, a := range registered() {
		keys = append(keys, a.key)
		ac := a.config(cfg)
		if ac.Enabled {
			enabled++
		}
		errs = append(errs, ac.validate(a.key)...)
	}
	if enabled == 0 {
		errs = append(errs, fmt.Errorf("no agent enabled: set `enabled: true` on one of %s", strings.Join(keys, ", ")))
	}
	return errors.Join(errs...)
}
