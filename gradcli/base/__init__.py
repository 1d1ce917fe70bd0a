"""The ground floor: what every other part uses, and which uses nothing of gradcli: errors,
notices, files, records, bounds."""
