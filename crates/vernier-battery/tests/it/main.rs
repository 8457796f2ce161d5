mod truth;
