// Package settings is the one table of the simulator's settings and the
// world data they name. Each Setting is declared once (settings_table.go,
// world.go, price_settings.go, settings_llmd.go): its key, its flag and how
// a family of settings is written on a command line and in a file
// (family.go), its range or choices, its default, when it has an effect
// (rules.go), whether it places a run in its world (World, WorldKeys), and
// its production counterpart in llm-d or vLLM (counterpart.go,
// production_table.go). The CLI's flags, templates, --set, settings files
// (settings_file.go), ablation and the dashboard all read this table;
// CheckConfig runs the simulator's own checks on a configuration, its
// world resolved in the built-in data (builtin.go reads templates/) or a
// copy holding a user's model or GPU files.
package settings
