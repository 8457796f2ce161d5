//! The functions tool-call tasks offer, and the drawing of each kind of task: the request, the
//! functions offered (the ones needed, a similar one, others, in a drawn order) and the calls
//! expected.

use serde_json::{Value, json};
use vernier_stats::SplitMix64;

use super::spec::{CallsKind, CallsSpec, ExpectedCall};
use crate::task::ToolSpec;

const UNITS: [&str; 2] = ["celsius", "fahrenheit"];
const CURRENCIES: [&str; 6] = ["USD", "EUR", "GBP", "JPY", "CHF", "SEK"];
const CABINS: [&str; 4] = ["economy", "premium", "business", "first"];
const DATE: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

/// Every function in the catalogue, by name.
const NAMES: [&str; 8] = [
    "get_weather",
    "get_forecast",
    "convert_currency",
    "book_table",
    "create_event",
    "search_flights",
    "get_stock_price",
    "send_message",
];

/// The function `name`, as offered.
pub(super) fn function(name: &str) -> Option<ToolSpec> {
    let (description, parameters) = match name {
        "get_weather" => (
            "Current weather for a city.",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name."},
                "unit": {"type": "string", "enum": UNITS, "default": "celsius"}
            }, "required": ["city"], "additionalProperties": false}),
        ),
        "get_forecast" => (
            "Weather forecast for a city for the coming days.",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name."},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"type": "string", "enum": UNITS, "default": "celsius"}
            }, "required": ["city", "days"], "additionalProperties": false}),
        ),
        "convert_currency" => (
            "Convert an amount of money from one currency to another.",
            json!({"type": "object", "properties": {
                "amount": {"type": "number", "minimum": 0},
                "from": {"type": "string", "enum": CURRENCIES},
                "to": {"type": "string", "enum": CURRENCIES}
            }, "required": ["amount", "from", "to"], "additionalProperties": false}),
        ),
        "book_table" => (
            "Book a restaurant table.",
            json!({"type": "object", "properties": {
                "restaurant": {"type": "string"},
                "party_size": {"type": "integer", "minimum": 1},
                "time": {"type": "object", "properties": {
                    "date": {"type": "string", "pattern": DATE, "description": "YYYY-MM-DD"},
                    "hour": {"type": "integer", "minimum": 0, "maximum": 23, "description": "0-23"}
                }, "required": ["date", "hour"], "additionalProperties": false},
                "outdoor": {"type": "boolean", "default": false}
            }, "required": ["restaurant", "party_size", "time"], "additionalProperties": false}),
        ),
        "create_event" => (
            "Create a calendar event.",
            json!({"type": "object", "properties": {
                "title": {"type": "string"},
                "date": {"type": "string", "pattern": DATE, "description": "YYYY-MM-DD"},
                "attendees": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "reminder_minutes": {"type": "integer", "minimum": 0, "default": 15}
            }, "required": ["title", "date", "attendees"], "additionalProperties": false}),
        ),
        "search_flights" => (
            "Search flights between two airports.",
            json!({"type": "object", "properties": {
                "origin": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA code."},
                "destination": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA code."},
                "date": {"type": "string", "pattern": DATE, "description": "YYYY-MM-DD"},
                "cabin": {"type": "string", "enum": CABINS, "default": "economy"},
                "passengers": {"type": "integer", "minimum": 1, "default": 1}
            }, "required": ["origin", "destination", "date"], "additionalProperties": false}),
        ),
        "get_stock_price" => (
            "Latest price of a listed company's stock.",
            json!({"type": "object", "properties": {
                "symbol": {"type": "string", "description": "Ticker symbol."}
            }, "required": ["symbol"], "additionalProperties": false}),
        ),
        "send_message" => (
            "Send a text message to a contact.",
            json!({"type": "object", "properties": {
                "recipient": {"type": "string"},
                "body": {"type": "string"},
                "urgent": {"type": "boolean", "default": false}
            }, "required": ["recipient", "body"], "additionalProperties": false}),
        ),
        _ => return None,
    };
    Some(ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    })
}

/// The function most like `name` (what a model choosing carelessly would call).
pub(super) fn sibling(name: &str) -> Option<&'static str> {
    match name {
        "get_weather" => Some("get_forecast"),
        "get_forecast" => Some("get_weather"),
        "book_table" => Some("create_event"),
        "create_event" => Some("book_table"),
        "get_stock_price" => Some("convert_currency"),
        "convert_currency" => Some("get_stock_price"),
        _ => None,
    }
}

/// Whether the argument `key` is free text (no enum, no pattern): a changed value stays valid.
pub(super) fn is_free_text(key: &str) -> bool {
    matches!(
        key,
        "city" | "restaurant" | "title" | "recipient" | "body" | "symbol"
    )
}

const CITIES: [&str; 10] = [
    "Lisbon", "Tallinn", "Osaka", "Hobart", "Quebec", "Trieste", "Cusco", "Gdansk", "Mombasa",
    "Tromso",
];
const RESTAURANTS: [&str; 5] = [
    "Casa Azul",
    "The Copper Pot",
    "Little Saigon",
    "Bistro Marlow",
    "Olive Grove",
];
const PEOPLE: [&str; 8] = [
    "Ana", "Tomas", "Mei", "Kofi", "Ines", "Omar", "Lena", "Ravi",
];
const EVENTS: [&str; 4] = [
    "Budget review",
    "Quarterly planning",
    "Design critique",
    "Team lunch",
];
const AIRPORTS: [&str; 8] = ["LIS", "OSL", "NRT", "YUL", "SCL", "NBO", "HBA", "GDN"];
const SYMBOLS: [&str; 6] = ["ACME", "GLOBX", "INITE", "UMBR", "WAYN", "STRK"];
/// Questions no offered function answers, with the word a right answer holds.
const UNFIT: [(&str, &str); 4] = [
    (
        "Which colour do you get by mixing blue and yellow paint? Answer in one word.",
        "green",
    ),
    ("What is the largest ocean on Earth? One word.", "Pacific"),
    ("Which planet is known as the Red Planet? One word.", "Mars"),
    (
        "What is the opposite of the word 'ancient'? One word: the usual antonym starting with m.",
        "modern",
    ),
];

fn date(rng: &mut SplitMix64) -> String {
    format!("2027-{:02}-{:02}", rng.range(1, 12), rng.range(1, 28))
}

fn call(name: &str, arguments: Value) -> ExpectedCall {
    ExpectedCall {
        name: name.to_owned(),
        arguments,
    }
}

/// The functions offered: those `needed`, their similar ones, and others up to five, in a
/// drawn order.
fn offer(needed: &[&str], rng: &mut SplitMix64) -> Vec<String> {
    let mut offered: Vec<&str> = Vec::new();
    for name in needed {
        for candidate in [Some(*name), sibling(name)].into_iter().flatten() {
            if !offered.contains(&candidate) {
                offered.push(candidate);
            }
        }
    }
    let mut rest: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|name| !offered.contains(name))
        .collect();
    rng.shuffle(&mut rest);
    while offered.len() < 5 {
        match rest.pop() {
            Some(name) => offered.push(name),
            None => break,
        }
    }
    rng.shuffle(&mut offered);
    offered.into_iter().map(str::to_owned).collect()
}

fn two_cities(rng: &mut SplitMix64) -> (&'static str, &'static str) {
    let first = *rng.pick(&CITIES);
    loop {
        let second = *rng.pick(&CITIES);
        if second != first {
            return (first, second);
        }
    }
}

fn two_currencies(rng: &mut SplitMix64) -> (&'static str, &'static str) {
    let from = *rng.pick(&CURRENCIES);
    loop {
        let to = *rng.pick(&CURRENCIES);
        if to != from {
            return (from, to);
        }
    }
}

fn amount(rng: &mut SplitMix64) -> f64 {
    // Two decimals, never a whole number, below 1,000 (no thousands separator to misread).
    f64::from(u32::try_from(rng.range(1_001, 99_999)).unwrap_or(1_001) | 1) / 100.0
}

fn spec(
    kind: CallsKind,
    request: String,
    offered: Vec<String>,
    expected: Vec<ExpectedCall>,
) -> CallsSpec {
    CallsSpec {
        kind,
        request,
        offered,
        expected,
        tool_choice: None,
        history: None,
        must_mention: None,
    }
}

/// A task of `kind` (the `n`th of its kind in the suite), drawn from `rng`.
pub(super) fn draw(kind: CallsKind, n: u32, rng: &mut SplitMix64) -> CallsSpec {
    match kind {
        CallsKind::Parallel
        | CallsKind::NoneFits
        | CallsKind::Required
        | CallsKind::Named
        | CallsKind::Result => draw_more(kind, n, rng),
        CallsKind::Single => {
            let (city, unit) = (*rng.pick(&CITIES), *rng.pick(&UNITS));
            spec(
                kind,
                format!(
                    "What is the weather in {city} right now? Give me the temperature in {unit}."
                ),
                offer(&["get_weather"], rng),
                vec![call("get_weather", json!({"city": city, "unit": unit}))],
            )
        }
        CallsKind::Choose => {
            let (city, days) = (*rng.pick(&CITIES), rng.range(2, 10));
            spec(
                kind,
                format!(
                    "I am travelling to {city}: what will the weather be like over the next {days} days?"
                ),
                offer(&["get_forecast"], rng),
                vec![call("get_forecast", json!({"city": city, "days": days}))],
            )
        }
        CallsKind::Number => {
            let (from, to) = two_currencies(rng);
            let amount = amount(rng);
            spec(
                kind,
                format!("How much is {amount} {from} in {to}?"),
                offer(&["convert_currency"], rng),
                vec![call(
                    "convert_currency",
                    json!({"amount": amount, "from": from, "to": to}),
                )],
            )
        }
        CallsKind::Nested => {
            let restaurant = *rng.pick(&RESTAURANTS);
            let (size, day, hour) = (rng.range(2, 9), date(rng), rng.range(12, 21));
            spec(
                kind,
                format!(
                    "Book a table at {restaurant} for {size} people on {day} at {hour}:00, outside on the terrace."
                ),
                offer(&["book_table"], rng),
                vec![call(
                    "book_table",
                    json!({"restaurant": restaurant, "party_size": size,
                           "time": {"date": day, "hour": hour}, "outdoor": true}),
                )],
            )
        }
        CallsKind::List => {
            let title = *rng.pick(&EVENTS);
            let mut people = PEOPLE;
            rng.shuffle(&mut people);
            let day = date(rng);
            spec(
                kind,
                format!(
                    "Put \"{title}\" in my calendar on {day} and invite {}, {} and {}.",
                    people[0], people[1], people[2]
                ),
                offer(&["create_event"], rng),
                vec![call(
                    "create_event",
                    json!({"title": title, "date": day, "attendees": &people[..3]}),
                )],
            )
        }
    }
}

/// The kinds with several calls, none, a forced one or a history.
fn draw_more(kind: CallsKind, n: u32, rng: &mut SplitMix64) -> CallsSpec {
    match kind {
        CallsKind::Parallel if n % 2 == 1 => {
            let (first, second) = two_cities(rng);
            spec(
                kind,
                format!(
                    "What is the weather right now in {first} and in {second}? Look both up at once."
                ),
                offer(&["get_weather"], rng),
                vec![
                    call("get_weather", json!({"city": first})),
                    call("get_weather", json!({"city": second})),
                ],
            )
        }
        CallsKind::Parallel => {
            let city = *rng.pick(&CITIES);
            let (from, to) = two_currencies(rng);
            let amount = amount(rng);
            spec(
                kind,
                format!(
                    "Two things at once: the current weather in {city}, and {amount} {from} converted to {to}."
                ),
                offer(&["get_weather", "convert_currency"], rng),
                vec![
                    call("get_weather", json!({"city": city})),
                    call(
                        "convert_currency",
                        json!({"amount": amount, "from": from, "to": to}),
                    ),
                ],
            )
        }
        CallsKind::NoneFits => {
            let (question, word) = UNFIT[usize::try_from(n).unwrap_or(0) % UNFIT.len()];
            let mut drawn = spec(
                kind,
                question.to_owned(),
                offer(&["get_weather", "convert_currency"], rng),
                Vec::new(),
            );
            drawn.must_mention = Some(word.to_owned());
            drawn
        }
        CallsKind::Required => {
            let symbol = *rng.pick(&SYMBOLS);
            let mut drawn = spec(
                kind,
                format!("Look up the latest stock price of {symbol}."),
                offer(&["get_stock_price"], rng),
                vec![call("get_stock_price", json!({"symbol": symbol}))],
            );
            drawn.tool_choice = Some(json!("required"));
            drawn
        }
        CallsKind::Named => {
            let origin = *rng.pick(&AIRPORTS);
            let destination = loop {
                let other = *rng.pick(&AIRPORTS);
                if other != origin {
                    break other;
                }
            };
            let (day, passengers, cabin) = (date(rng), rng.range(2, 5), *rng.pick(&CABINS[1..]));
            let mut drawn = spec(
                kind,
                format!(
                    "Find flights from {origin} to {destination} on {day} for {passengers} passengers in {cabin} class."
                ),
                offer(&["search_flights"], rng),
                vec![call(
                    "search_flights",
                    json!({"origin": origin, "destination": destination, "date": day,
                           "passengers": passengers, "cabin": cabin}),
                )],
            );
            drawn.tool_choice =
                Some(json!({"type": "function", "function": {"name": "search_flights"}}));
            drawn
        }
        CallsKind::Result => draw_result(kind, rng),
        // The one-call kinds are `draw`'s own.
        other => draw(other, n, rng),
    }
}

/// A call and its result already in the conversation: the answer must use the result.
fn draw_result(kind: CallsKind, rng: &mut SplitMix64) -> CallsSpec {
    let city = *rng.pick(&CITIES);
    let (whole, tenth) = (rng.range(3, 29), rng.range(1, 9));
    let temperature = format!("{whole}.{tenth}");
    let mut drawn = spec(
        kind,
        format!("What is the temperature in {city} right now, in celsius?"),
        offer(&["get_weather"], rng),
        Vec::new(),
    );
    drawn.history = Some((
        call("get_weather", json!({"city": city, "unit": "celsius"})),
        json!({"city": city, "temperature": temperature.parse::<f64>().unwrap_or(0.0),
                   "unit": "celsius", "condition": "light rain"})
        .to_string(),
    ));
    drawn.must_mention = Some(temperature);
    drawn
}
