//! The record a structured-output task extracts: a shipment, its schema at each level, its
//! prose and table forms, and the walk over its values that the proof changes one at a time.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use vernier_stats::SplitMix64;

/// Where a record is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StructuredSource {
    /// A paragraph stating the record, with an earlier shipment beside it.
    Text,
    /// A Markdown table of four shipments; the record is one row.
    Table,
}

impl StructuredSource {
    /// The name prompts and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Table => "table",
        }
    }
}

/// One shipment: every field a level may ask for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Shipment {
    /// `ABC-1234`.
    pub reference: String,
    /// The destination.
    pub city: String,
    /// Pieces, 1 to 60.
    pub pieces: u32,
    /// Weight in hundredths of a kilogram.
    pub weight_centi_kg: u32,
    /// Whether it is fragile.
    pub fragile: bool,
    /// `low`, `normal`, `high` or `urgent`.
    pub priority: String,
    /// The contact's name.
    pub contact_name: String,
    /// The contact's phone.
    pub contact_phone: String,
    /// Stock-keeping units with their quantities (two or three).
    pub items: Vec<(String, u32)>,
}

const PRIORITIES: [&str; 4] = ["low", "normal", "high", "urgent"];
const CITIES: [&str; 12] = [
    "Lisbon",
    "Tallinn",
    "Osaka",
    "Valparaiso",
    "Windhoek",
    "Quebec",
    "Trieste",
    "Hobart",
    "Tromso",
    "Cusco",
    "Gdansk",
    "Mombasa",
];
const NAMES: [&str; 8] = [
    "Ana Reyes",
    "Tomas Berg",
    "Mei Lin",
    "Kofi Mensah",
    "Ines Duarte",
    "Omar Haddad",
    "Lena Vogel",
    "Ravi Nair",
];
const SKU_PREFIXES: [&str; 6] = ["BX", "PL", "CR", "TB", "DR", "KT"];

fn draw_shipment(rng: &mut SplitMix64, taken: &[Shipment]) -> Shipment {
    loop {
        let letters: String = (0..3)
            .map(|_| char::from(b'A' + u8::try_from(rng.below(26)).unwrap_or(0)))
            .collect();
        let reference = format!("{letters}-{}", rng.range(1000, 9999));
        let city = (*rng.pick(&CITIES)).to_owned();
        if taken
            .iter()
            .any(|other| other.reference == reference || other.city == city)
        {
            continue;
        }
        let n_items = usize::try_from(rng.range(2, 3)).unwrap_or(2);
        let mut prefixes = SKU_PREFIXES;
        rng.shuffle(&mut prefixes);
        let items = prefixes[..n_items]
            .iter()
            .map(|prefix| {
                (
                    format!("{prefix}-{}", rng.range(100, 999)),
                    u32::try_from(rng.range(1, 24)).unwrap_or(1),
                )
            })
            .collect();
        return Shipment {
            reference,
            city,
            pieces: u32::try_from(rng.range(1, 60)).unwrap_or(1),
            weight_centi_kg: u32::try_from(rng.range(150, 99_999)).unwrap_or(150),
            fragile: rng.chance(1, 2),
            priority: (*rng.pick(&PRIORITIES)).to_owned(),
            contact_name: (*rng.pick(&NAMES)).to_owned(),
            contact_phone: format!(
                "+{} {} {}",
                rng.range(20, 99),
                rng.range(100, 999),
                rng.range(1000, 9999)
            ),
            items,
        };
    }
}

/// The record and the shipments beside it (one in a text, three in a table), all with
/// different references and cities.
pub(super) fn draw(rng: &mut SplitMix64, source: StructuredSource) -> (Shipment, Vec<Shipment>) {
    let record = draw_shipment(rng, &[]);
    let mut taken = vec![record.clone()];
    let n_others = match source {
        StructuredSource::Text => 1,
        StructuredSource::Table => 3,
    };
    for _ in 0..n_others {
        let other = draw_shipment(rng, &taken);
        taken.push(other);
    }
    taken.remove(0);
    (record, taken)
}

impl Shipment {
    /// The weight in kilograms as a JSON number (written as the prompt writes it).
    fn weight(&self) -> Value {
        json!(f64::from(self.weight_centi_kg) / 100.0)
    }

    /// The record as a reply of `level` must hold it.
    pub fn to_json(&self, level: u32) -> Value {
        let mut fields = Map::new();
        fields.insert("reference".to_owned(), json!(self.reference));
        fields.insert("city".to_owned(), json!(self.city));
        fields.insert("pieces".to_owned(), json!(self.pieces));
        if level >= 2 {
            fields.insert("weight_kg".to_owned(), self.weight());
            fields.insert("fragile".to_owned(), json!(self.fragile));
            fields.insert("priority".to_owned(), json!(self.priority));
        }
        if level >= 3 {
            fields.insert(
                "contact".to_owned(),
                json!({"name": self.contact_name, "phone": self.contact_phone}),
            );
        }
        if level >= 4 {
            let items: Vec<Value> = self
                .items
                .iter()
                .map(|(sku, quantity)| json!({"sku": sku, "quantity": quantity}))
                .collect();
            fields.insert("items".to_owned(), Value::Array(items));
        }
        Value::Object(fields)
    }
}

/// The fields a reply of `level` holds, in the prompt's order.
pub(super) fn field_names(level: u32) -> Vec<&'static str> {
    let mut names = vec!["reference", "city", "pieces"];
    if level >= 2 {
        names.extend(["weight_kg", "fragile", "priority"]);
    }
    if level >= 3 {
        names.push("contact (name, phone)");
    }
    if level >= 4 {
        names.push("items (a list of sku and quantity)");
    }
    names
}

fn closed_object(properties: &Value) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|fields| fields.keys().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The JSON schema of a reply of `level`: every field required, no other allowed (the form
/// strict structured outputs take).
pub(super) fn schema(level: u32) -> Value {
    let mut properties = json!({
        "reference": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        "city": {"type": "string"},
        "pieces": {"type": "integer", "minimum": 1},
    });
    if level >= 2 {
        properties["weight_kg"] = json!({"type": "number", "minimum": 0});
        properties["fragile"] = json!({"type": "boolean"});
        properties["priority"] = json!({"type": "string", "enum": PRIORITIES});
    }
    if level >= 3 {
        properties["contact"] = closed_object(&json!({
            "name": {"type": "string"},
            "phone": {"type": "string"},
        }));
    }
    if level >= 4 {
        properties["items"] = json!({
            "type": "array",
            "minItems": 1,
            "items": closed_object(&json!({
                "sku": {"type": "string"},
                "quantity": {"type": "integer", "minimum": 1},
            })),
        });
    }
    closed_object(&properties)
}

/// The record stated in a paragraph, with an earlier shipment (another reference, city and
/// numbers) beside it from level 2.
pub(super) fn prose(record: &Shipment, other: &[Shipment], level: u32) -> String {
    let mut sentences = vec![format!(
        "Shipment {} is bound for {} with {} pieces.",
        record.reference, record.city, record.pieces
    )];
    if level >= 2 {
        sentences.push(format!("Together they weigh {} kg.", record.weight()));
        sentences.push(if record.fragile {
            "The goods are fragile and must be handled with care.".to_owned()
        } else {
            "Nothing in it is fragile.".to_owned()
        });
        sentences.push(format!("It is marked {} priority.", record.priority));
    }
    if level >= 3 {
        sentences.push(format!(
            "The contact on arrival is {}, reachable at {}.",
            record.contact_name, record.contact_phone
        ));
    }
    if level >= 4 {
        let items: Vec<String> = record
            .items
            .iter()
            .map(|(sku, quantity)| format!("{quantity} units of {sku}"))
            .collect();
        sentences.push(format!("It holds {}.", items.join(" and ")));
    }
    if let (Some(earlier), true) = (other.first(), level >= 2) {
        sentences.push(format!(
            "An earlier shipment, {}, went to {} with {} pieces weighing {} kg.",
            earlier.reference,
            earlier.city,
            earlier.pieces,
            earlier.weight()
        ));
    }
    sentences.join(" ")
}

/// The record as one row of a Markdown table among `others` (its place after the first of
/// them, so it is never the first row).
pub(super) fn table(record: &Shipment, others: &[Shipment], level: u32) -> String {
    let yes_no = |fragile: bool| if fragile { "yes" } else { "no" };
    let row = |s: &Shipment| {
        if level >= 2 {
            format!(
                "| {} | {} | {} | {} | {} | {} |",
                s.reference,
                s.city,
                s.pieces,
                s.weight(),
                yes_no(s.fragile),
                s.priority
            )
        } else {
            format!("| {} | {} | {} |", s.reference, s.city, s.pieces)
        }
    };
    let mut lines = if level >= 2 {
        vec![
            "| reference | city | pieces | weight (kg) | fragile | priority |".to_owned(),
            "|---|---|---|---|---|---|".to_owned(),
        ]
    } else {
        vec![
            "| reference | city | pieces |".to_owned(),
            "|---|---|---|".to_owned(),
        ]
    };
    let mut rows: Vec<String> = others.iter().map(row).collect();
    let place = 1.min(rows.len());
    rows.insert(place, row(record));
    lines.extend(rows);
    lines.join("\n")
}

/// Every value of a record with its path (`contact.phone`, `items[1].quantity`), in one fixed
/// order.
pub(super) fn leaf_paths(value: &Value) -> Vec<(String, Value)> {
    fn walk(path: String, value: &Value, out: &mut Vec<(String, Value)>) {
        match value {
            Value::Object(fields) => {
                for (key, inner) in fields {
                    let next = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(next, inner, out);
                }
            }
            Value::Array(items) => {
                for (index, inner) in items.iter().enumerate() {
                    walk(format!("{path}[{index}]"), inner, out);
                }
            }
            leaf => out.push((path, leaf.clone())),
        }
    }
    let mut out = Vec::new();
    walk(String::new(), value, &mut out);
    out
}

/// Changes the value at `index` of [`leaf_paths`]' order to another the schema accepts: a
/// reference's last digit, a text lengthened, a number raised, a yes/no flipped, a priority
/// moved to the next.
pub(super) fn change_leaf(value: &mut Value, index: usize) {
    fn walk(value: &mut Value, index: usize, seen: &mut usize) -> bool {
        match value {
            Value::Object(fields) => fields.values_mut().any(|inner| walk(inner, index, seen)),
            Value::Array(items) => items.iter_mut().any(|inner| walk(inner, index, seen)),
            leaf => {
                if *seen != index {
                    *seen += 1;
                    return false;
                }
                *leaf = changed(leaf);
                true
            }
        }
    }
    let mut seen = 0;
    walk(value, index, &mut seen);
}

fn changed(leaf: &Value) -> Value {
    match leaf {
        Value::Bool(flag) => Value::Bool(!flag),
        Value::Number(number) if number.is_u64() => json!(number.as_u64().unwrap_or(0) + 1),
        Value::Number(number) => json!(number.as_f64().unwrap_or(0.0) + 1.25),
        Value::String(text) => {
            if let Some(at) = PRIORITIES.iter().position(|p| p == text) {
                return json!(PRIORITIES[(at + 1) % PRIORITIES.len()]);
            }
            let bytes = text.as_bytes();
            match bytes.last() {
                Some(last) if last.is_ascii_digit() => {
                    let digit = (last - b'0' + 1) % 10;
                    json!(format!("{}{digit}", &text[..text.len() - 1]))
                }
                _ => json!(format!("{text}x")),
            }
        }
        other => other.clone(),
    }
}
