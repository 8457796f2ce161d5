mod energy;
mod truth;
