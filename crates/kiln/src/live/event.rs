//! Events from the page, decoded into the view's own event type: a value the markup
//! rendered (`on:click=(Event::Open(3))`), or the fields of a form decoded into the
//! payload of the variant the markup named (`on:submit=(Event::Save)`), as
//! [`Form<T>`](crate::Form) decodes a body.

use std::fmt;

use serde::Deserializer;
use serde::de::value::{Error as ValueError, StrDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, EnumAccess, IntoDeserializer, VariantAccess, Visitor};

/// An event the page sent that the view cannot take: not JSON, not of the view's
/// event type, or a form whose fields do not fit the variant's payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventError(String);

impl EventError {
    /// What was wrong, for the error reply.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid event: {}", self.0)
    }
}

impl std::error::Error for EventError {}

/// An event as the page sends it (see the wire format in [`crate::live`]). Read by
/// hand rather than derived: kiln builds without serde's derive (a first build's cost).
struct Wire {
    event: serde_json::Value,
    form: Option<String>,
}

impl Wire {
    fn parse(message: &[u8]) -> Result<Wire, EventError> {
        let value: serde_json::Value = serde_json::from_slice(message).map_err(|e| EventError(e.to_string()))?;
        let serde_json::Value::Object(mut fields) = value else {
            return Err(EventError("an event is a JSON object".into()));
        };
        let event = fields.remove("event").ok_or_else(|| EventError("missing field `event`".into()))?;
        let form = match fields.remove("form") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(form)) => Some(form),
            Some(_) => return Err(EventError("`form` is a string of urlencoded fields".into())),
        };
        Ok(Wire { event, form })
    }
}

/// Decodes a message from the page into the view's event type `E`: `{"event": value}`
/// for a value the markup rendered, `{"event": "Variant", "form": "a=1&b=2"}` for a
/// form's fields sent to the variant that takes them.
pub fn decode_event<E: DeserializeOwned>(message: &[u8]) -> Result<E, EventError> {
    let wire = Wire::parse(message)?;
    match wire.form {
        None => serde_json::from_value(wire.event).map_err(|e| EventError(e.to_string())),
        Some(form) => {
            let serde_json::Value::String(variant) = wire.event else {
                return Err(EventError("a form event names its variant as a string".into()));
            };
            E::deserialize(FormVariant { variant: &variant, form: form.as_bytes() })
                .map_err(|e| EventError(e.to_string()))
        }
    }
}

/// An enum value whose variant is named and whose payload is a form's fields.
struct FormVariant<'a> {
    variant: &'a str,
    form: &'a [u8],
}

impl<'de> Deserializer<'de> for FormVariant<'de> {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ValueError> {
        Err(de::Error::custom("a form event decodes into the view's event enum"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de> EnumAccess<'de> for FormVariant<'de> {
    type Error = ValueError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), ValueError> {
        let name: StrDeserializer<'_, ValueError> = self.variant.into_deserializer();
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> VariantAccess<'de> for FormVariant<'de> {
    type Error = ValueError;

    fn unit_variant(self) -> Result<(), ValueError> {
        Err(de::Error::custom(format!("`{}` takes no form", self.variant)))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, ValueError> {
        seed.deserialize(serde_urlencoded::Deserializer::new(form_urlencoded::parse(self.form)))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, ValueError> {
        Err(de::Error::custom(format!("`{}` takes the form as one struct: `{}(T)`", self.variant, self.variant)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, ValueError> {
        Err(de::Error::custom(format!("`{}` takes the form as one struct: `{}(T)`", self.variant, self.variant)))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::decode_event;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Note {
        title: String,
        stars: u8,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Event {
        Increment,
        Open(u32),
        Save(Note),
    }

    #[test]
    fn decode_event_takes_values_and_forms_and_refuses_the_rest() {
        assert_eq!(decode_event::<Event>(br#"{"event":"Increment"}"#), Ok(Event::Increment));
        assert_eq!(decode_event::<Event>(br#"{"event":{"Open":3}}"#), Ok(Event::Open(3)));
        assert_eq!(
            decode_event::<Event>(br#"{"event":"Save","form":"title=a+%26+b&stars=4"}"#),
            Ok(Event::Save(Note { title: "a & b".into(), stars: 4 }))
        );
        for bad in [
            &br#"{"event":"Decrement"}"#[..],
            br#"{"event":{"Open":"x"}}"#,
            br#"{"event":"Save","form":"title=a&stars=many"}"#,
            br#"{"event":"Increment","form":""}"#,
            br#"{"event":"Nope","form":"a=1"}"#,
            b"not json",
        ] {
            assert!(decode_event::<Event>(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
