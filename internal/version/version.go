// Package version holds the generated-code API version shared by the
// generator (gen) and the runtime (runtime/sgimpl).
//
// It imports nothing so that both sides can depend on it without the
// generator pulling in the runtime or the runtime pulling in the generator.
package version

const (
	// GenVersion is the version of the generated-code API that the current
	// generator emits. It goes up only when generated code starts to need
	// runtime API that older runtimes lack; it is unrelated to release
	// versions, so goldens do not churn on every release.
	GenVersion = 2

	// MinVersion is the oldest GenVersion the current runtime still supports.
	MinVersion = 1

	// MaxVersion is the newest GenVersion the current runtime supports.
	MaxVersion = 2
)
