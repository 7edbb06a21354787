// Parameters the front door consumes before any plan exists: preset (expanded into the request)
// and v (the original's version, checked against the stored one). They are signed like the rest
// but add nothing to the plan or the key (the key names the version itself).
import { defineParam } from '../transform-param.js';

export const preset = defineParam({ name: 'preset', type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', example: 'thumb', sets: ['A', 'B'], notInPresets: true, withPresetsOnly: true, description: 'A named parameter set from the PRESETS configuration; parameters given explicitly win.' });

export const v = defineParam({ name: 'v', type: 'string', pattern: '^[A-Za-z0-9]{1,32}$', sets: ['A', 'B'], notInPresets: true, withPresetsOnly: true, description: "The original's version (as handed out in URLs): versioned URLs are immutable; a replaced version answers 404." });
