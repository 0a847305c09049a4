package clinics

import (
	"encoding/json"
	"strings"
)

// TypeText is an appointment type's name and description in one language.
type TypeText struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Translations are a type's texts by language ("de"), beside the name and
// description it is stored with, which speak for every language missing
// here.
type Translations map[string]TypeText

// ParseTranslations reads the stored object; anything unreadable is none
// (the column's check keeps it an object).
func ParseTranslations(raw []byte) Translations {
	var t Translations
	if len(raw) == 0 || json.Unmarshal(raw, &t) != nil {
		return nil
	}
	return t
}

// JSON is t as it is stored: only languages with a name, trimmed.
func (t Translations) JSON() []byte {
	out := Translations{}
	for lang, tx := range t {
		tx.Name, tx.Description = strings.TrimSpace(tx.Name), strings.TrimSpace(tx.Description)
		if tx.Name != "" {
			out[lang] = tx
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// Name is the type's name in lang: its translation, else name.
func (t Translations) Name(lang, name string) string {
	if tx, ok := t[lang]; ok && tx.Name != "" {
		return tx.Name
	}
	return name
}

// Description is the type's description in lang: the translation's when
// it has a name there, else description.
func (t Translations) Description(lang, description string) string {
	if tx, ok := t[lang]; ok && tx.Name != "" {
		return tx.Description
	}
	return description
}
